import { CuadraError, type ToolContext } from '@cuadra/shared';
import type { Attendee } from './model.ts';

/**
 * Checks that each attendee naming a crm party names one of this workspace, through crm's graph
 * (a subgraph never reads another's collections); a party crm does not know is refused at its
 * pointer (CONTRACT §10). Runs before anything is written.
 */
export async function checkParties(ctx: Pick<ToolContext, 'graph'>, attendees: readonly Attendee[], pointer = '/attendees'): Promise<void> {
  const named = attendees.map((a, i) => ({ id: a.party_id, i })).filter((a): a is { id: string; i: number } => a.id !== null);
  if (named.length === 0) return;
  if (!ctx.graph) throw new CuadraError('unavailable', 'The crm service is not configured here; nothing was done.', { beforeAnyEffect: true });
  for (const { id, i } of named) {
    const data = await ctx.graph('crm', 'query($id: ID!) { party(id: $id) { id } }', { id }).catch((err: unknown) => {
      throw Object.assign(err as object, { beforeAnyEffect: true });
    });
    if (!data.party) throw new CuadraError('invalid_input', `No party ${id} exists in this workspace.`, { field: `${pointer}/${i}/party_id` });
  }
}
