// What a bench's load meets in each process's fair share per workspace (shared/src/fair-share.ts):
// the benches run on the shipped limits (FAIR_SHARE_* from the environment, as the services read
// them), so their figures include a workspace's calls waiting their turn; this line says how many.
import { fairShareFromEnv } from '../shared/src/fair-share.ts';

/** One line: the share in force and how `connections` of one workspace meet it (run at once, wait, refused). */
export function describeFairShare(connections: number): string {
  const { slots, contendedSlots = slots, queue, pace } = fairShareFromEnv();
  const waiting = Math.max(0, connections - slots);
  const refused = Math.max(0, waiting - queue);
  return `fair share per workspace and process: ${slots} slots alone, ${contendedSlots} while another workspace calls, ${queue} waiting, ${pace ? `a workspace more than ${pace}× as busy as another held back while that one runs` : 'no pacing'} (FAIR_SHARE_SLOTS, FAIR_SHARE_CONTENDED_SLOTS, FAIR_SHARE_QUEUE, FAIR_SHARE_PACE); ${connections} connections of one workspace alone: ${Math.min(slots, connections)} run at once, ${waiting - refused} wait their turn${refused ? `, ${refused} refused 429 (the bench fails on a non-2xx)` : ', none refused'}`;
}
