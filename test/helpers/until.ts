/**
 * How long a test waits for what a background job, another service or the mail server makes true (a run
 * started, a message delivered, an approval executed): a bound that only a failing test reaches, generous
 * for a loaded machine — never a timing assertion. Waits bounded by a count of ~10 s failed or came
 * near it at load 9–14 while the same events took a second or two on an idle machine.
 */
export const EVENT_WAIT_MS = 60_000;

/**
 * Polls `read` until `done` holds of its answer, every `everyMs`, for at most about `ms`; answers
 * the last answer either way (the caller's assertion then says what was wrong). For what a
 * background job makes true (a feed pulled, a repair run) — a wait on a condition, never a sleep.
 */
export async function until<T>(read: () => Promise<T>, done: (v: T) => boolean, ms = 15_000, everyMs = 100): Promise<T> {
  const deadline = Date.now() + ms;
  let v = await read();
  while (!done(v) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, everyMs));
    v = await read();
  }
  return v;
}
