import { CuadraError, defineTool } from '@cuadra/shared';
import { LEDGER_VERIFICATION_SCHEMA } from '../views.ts';

/** Receipts one call may check (each is one indexed read and one signature check). */
const MAX_RECEIPTS = 50;

/**
 * Verifies the workspace's ledger (CONTRACT.md §6, §9): routinely from the newest signed
 * checkpoint on, against the signed head kept outside the database and the receipts given;
 * `full` walks the whole chain, for owners and admins, once a minute per workspace.
 */
export const verify = defineTool({
  name: 'ledger.verify',
  description: 'Verify the workspace action ledger: recomputes the hash chain since the newest signed checkpoint, checks its end against the signed head (a cut-back or rewritten tail is found), and confirms the Ledger-Receipt values given in `receipts`. `full: true` walks the whole chain (owners and admins, once a minute per workspace).',
  risk: 'read',
  input: {
    type: 'object', additionalProperties: false,
    properties: {
      full: { type: 'boolean' },
      receipts: { type: 'array', maxItems: MAX_RECEIPTS, items: { type: 'string', minLength: 1, maxLength: 200 } },
    },
  },
  output: LEDGER_VERIFICATION_SCHEMA,
  async handler(input, ctx) {
    if (input.full) {
      if (ctx.principal.role !== 'owner' && ctx.principal.role !== 'admin') {
        throw new CuadraError('policy_denied', 'A full walk of the ledger is for owners and admins; ledger.verify without `full` checks what was appended since the last signed checkpoint.');
      }
      const wait = await ctx.governance.ledger.claimFullWalk(ctx.workspace);
      if (wait > 0) {
        throw new CuadraError('rate_limited', `A full walk of this workspace's ledger ran less than a minute ago; wait ${wait} s.`, { extra: { headers: { 'Retry-After': String(wait) } } });
      }
    }
    return { ...(await ctx.governance.ledger.verify(ctx.workspace, { full: input.full === true, receipts: input.receipts })) };
  },
});
