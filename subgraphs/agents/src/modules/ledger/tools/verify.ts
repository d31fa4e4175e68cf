import { CuadraError, defineTool, parseReceipt, RECEIPT_WALK_FREE } from '@cuadra/shared';
import { LEDGER_VERIFICATION_SCHEMA } from '../views.ts';

/** Receipts one call may check (one signature check each; their prefix is walked once for all). */
const MAX_RECEIPTS = 50;

/**
 * Verifies the workspace's ledger (CONTRACT.md §6, §9): routinely from the newest signed
 * checkpoint on, against the signed heads kept (database, Redis); each receipt given proves its
 * entry and every entry before it (entries 1 to the largest receipt are recomputed: a prefix
 * longer than {@link RECEIPT_WALK_FREE} entries takes the workspace's long walk, once a minute);
 * `full` walks the whole chain, for owners and admins, once a minute per workspace.
 */
export const verify = defineTool({
  name: 'ledger.verify',
  description: 'Verify the workspace action ledger: recomputes the hash chain since the newest signed checkpoint and checks its end against the signed heads kept in the database and outside it (a cut-back or rewritten tail is found). Each Ledger-Receipt given in `receipts` proves its entry and every entry before it: entries 1 to the largest receipt are recomputed (more than 1,000 entries: once a minute per workspace). `full: true` walks the whole chain (owners and admins, once a minute per workspace).',
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
    if (input.full && ctx.principal.role !== 'owner' && ctx.principal.role !== 'admin') {
      throw new CuadraError('policy_denied', 'A full walk of the ledger is for owners and admins; ledger.verify without `full` checks what was appended since the last signed checkpoint.');
    }
    // The walks whose cost grows with the ledger (the full one; a receipts' prefix past RECEIPT_WALK_FREE) share one budget per workspace.
    const prefix = Math.max(0, ...(input.receipts ?? []).map((r) => parseReceipt(r)?.seq ?? 0));
    if (input.full || prefix > RECEIPT_WALK_FREE) {
      const wait = await ctx.governance.ledger.claimFullWalk(ctx.workspace);
      if (wait > 0) {
        throw new CuadraError('rate_limited', `A walk of this workspace's whole ledger ran less than a minute ago; wait ${wait} s (receipts up to entry ${RECEIPT_WALK_FREE} are checked at any time).`, { extra: { headers: { 'Retry-After': String(wait) } } });
      }
    }
    return { ...(await ctx.governance.ledger.verify(ctx.workspace, { full: input.full === true, receipts: input.receipts })) };
  },
});
