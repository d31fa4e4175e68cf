/**
 * The header a service's `/healthz` answers with the value its launcher gave it in
 * `CUADRA_INSTANCE` (scripts/system.ts): the launcher waits for *its* process to answer, not for
 * whatever listens on the port it chose — a port found free can be taken by another process before
 * the service binds it (then the service dies of EADDRINUSE while the other one answers).
 */
export const INSTANCE_HEADER = 'cuadra-instance';

/** Puts this process's instance token (when its launcher gave one) on a health answer. */
export function stampInstance(res: { setHeader(name: string, value: string): unknown }): void {
  const instance = process.env.CUADRA_INSTANCE;
  if (instance) res.setHeader(INSTANCE_HEADER, instance);
}
