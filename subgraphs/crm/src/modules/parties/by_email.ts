import { createHash } from 'node:crypto';
import { CuadraError, type ToolContext } from '@cuadra/shared';
import { parties, type PartyDoc } from './model.ts';
import { insertParty, type PartyInput } from './tools/create.ts';

/** The party made for an e-mail no party holds: its id follows from the workspace and the address, so two makers of one person's party make one. */
export function partyIdForEmail(workspace: string, email: string): string {
  return `pty_w${createHash('sha256').update(`${workspace}\n${email}`).digest('base64url').slice(0, 24)}`;
}

/**
 * The workspace's party of an e-mail (a site's lead, a booker): the oldest active party holding it,
 * else the one made for it — under the id {@link partyIdForEmail} derives, so a retry, a second
 * maker at once, or a crash after the party was made find it instead of making another (that one is
 * answered even when archived since: the caller decides). `created` says whether this call made it.
 */
export async function partyForEmail(ctx: Pick<ToolContext, 'db' | 'workspace' | 'now'>, email: string, make: () => PartyInput): Promise<{ party: PartyDoc; created: boolean }> {
  const held: PartyDoc | null = await parties(ctx.db).findOne({ workspace: ctx.workspace, email, status: 'active' }).sort({ created_at: 1 }).lean();
  if (held) return { party: held, created: false };
  const id = partyIdForEmail(ctx.workspace, email);
  try {
    return { party: await insertParty(ctx, make(), { id }), created: true };
  } catch (err) {
    // Made a moment ago by a concurrent call, or earlier for the same address.
    if (!(err instanceof CuadraError && err.code === 'conflict')) throw err;
    const made: PartyDoc | null = await parties(ctx.db).findOne({ _id: id, workspace: ctx.workspace }).lean();
    if (!made) throw err;
    return { party: made, created: false };
  }
}
