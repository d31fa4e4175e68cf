/**
 * The marketing service's clock. `MARKETING_CLOCK_START` (an RFC 3339 instant) starts the clock at
 * that instant when the process starts, then lets it run: the system tests run the sender on a
 * known weekday hour so that the Ley 2300 windows it enforces hold whatever day the tests run. Unset
 * (production), it is the machine's clock.
 */
export function serviceClock(env: NodeJS.ProcessEnv = process.env): () => Date {
  const start = env.MARKETING_CLOCK_START ? Date.parse(env.MARKETING_CLOCK_START) : NaN;
  if (Number.isNaN(start)) return () => new Date();
  const offset = start - Date.now();
  return () => new Date(Date.now() + offset);
}

let clock: (() => Date) | undefined;

/** Now, on the service's clock (read from the environment on first use). */
export function marketingNow(): Date {
  clock ??= serviceClock();
  return clock();
}
