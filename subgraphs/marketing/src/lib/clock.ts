import type { Connection } from 'mongoose';

/**
 * The marketing service's clock for one workspace: the machine's clock — unless the process runs with
 * the test setting `MARKETING_TEST_CLOCKS=on` and the workspace has a test clock, a document
 * `{_id: <workspace>, at, set_at}` in the `test_clocks` collection: then the workspace's clock read
 * `at` at the instant `set_at` and runs on from there. The system tests set one so that the Ley 2300
 * windows the campaigns keep to are open whatever day and hour the tests run, each test for its own
 * workspace only, on a system other files share (and across a restart of the service: the clock is
 * kept in the database, not in the process).
 *
 * Why this is safe in production: without the setting the collection is never read (no read per call,
 * no way to move a clock), and no tool, route or answer writes it — only whoever can already write
 * the service's database. With it, a clock moves one workspace's time only.
 */
export async function workspaceClock(db: Connection, workspace: string): Promise<() => Date> {
  if (process.env.MARKETING_TEST_CLOCKS !== 'on') return () => new Date();
  const set = await db.collection<{ _id: string; at: Date; set_at: Date }>(TEST_CLOCKS).findOne({ _id: workspace });
  if (!set) return () => new Date();
  const offset = set.at.getTime() - set.set_at.getTime();
  return () => new Date(Date.now() + offset);
}

/** Now, on the workspace's clock ({@link workspaceClock}). */
export async function marketingNow(db: Connection, workspace: string): Promise<Date> {
  return (await workspaceClock(db, workspace))();
}

/** The collection of the workspaces' test clocks (read only under `MARKETING_TEST_CLOCKS=on`). */
export const TEST_CLOCKS = 'test_clocks';
