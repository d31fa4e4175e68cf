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
  description: 'Verify the workspace action ledger: recomputes the hash chain since the newest signed checkpoint and checks its end against the signed heads kept in the database and outside it (a cut-back or rewritten tail is found). Each Ledger-Receipt given in `receipts` proves its entry and every entry before it: entries 1 to the largest receipt are recomputed (more than 1,000 entries: once a minute per workspace). `full: true` walks the whole chain (owners and admins, once a minute per workspace), in pages of at most 50,000 entries or 15 s: a page that stops before the end answers `next_cursor`; call again with `full: true` and that `cursor` to go on (the last page, without `next_cursor`, speaks for the whole walk).',
  risk: 'read',
  input: {
    type: 'object', additionalProperties: false,
    properties: {
      full: { type: 'boolean' },
      receipts: { type: 'array', maxItems: MAX_RECEIPTS, items: { type: 'string', minLength: 1, maxLength: 200 } },
      cursor: { type: 'string', minLength: 1, maxLength: 300, description: 'next_cursor of the previous page of a full walk (with `full: true`).' },
    },
  },
  output: LEDGER_VERIFICATION_SCHEMA,
  async handler(input, ctx) {
    if (input.full && ctx.principal.role !== 'owner' && ctx.principal.role !== 'admin') {
      throw new CuadraError('policy_denied', 'A full walk of the ledger is for owners and admins; ledger.verify without `full` checks what was appended since the last signed checkpoint.');
    }
    if (input.cursor !== undefined && !input.full) throw new CuadraError('invalid_input', 'A cursor continues a full walk: give it with `full: true`.', { field: '/cursor' });
    if (input.full && input.receipts) throw new CuadraError('invalid_input', 'A full walk (which answers in pages) takes no receipts: check them without `full`, which walks the entries they commit to.', { field: '/receipts' });
    // The walks whose cost grows with the ledger (the full one; a receipts' prefix past RECEIPT_WALK_FREE) share one budget per workspace;
    // a full walk's later pages continue the walk that claimed it (their cursor is signed, and each page is bounded).
    const prefix = Math.max(0, ...(input.receipts ?? []).map((r) => parseReceipt(r)?.seq ?? 0));
    if ((input.full && input.cursor === undefined) || prefix > RECEIPT_WALK_FREE) {
      const wait = await ctx.governance.ledger.claimFullWalk(ctx.workspace);
      if (wait > 0) {
        throw new CuadraError('rate_limited', `A walk of this workspace's whole ledger ran less than a minute ago; wait ${wait} s (receipts up to entry ${RECEIPT_WALK_FREE} are checked at any time).`, { extra: { headers: { 'Retry-After': String(wait) } } });
      }
    }
    return { ...(await ctx.governance.ledger.verify(ctx.workspace, { full: input.full === true, receipts: input.receipts, cursor: input.cursor })) };
  },
});
