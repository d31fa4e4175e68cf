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
