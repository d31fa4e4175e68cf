import { CURSOR_SCHEMA, defineTool, listNewestFirst } from '@cuadra/shared';
import { parties, partyView, type PartyDoc } from '../../models/party.ts';

interface Input { search?: string; kind?: PartyDoc['kind']; status?: PartyDoc['status']; limit?: number; cursor?: string }

/** Whether a party passes the list's filters; null when no filter is given. */
export function partyFilter(f: { kind?: string; status?: string; search?: string }): ((p: PartyDoc) => boolean) | null {
  if (!f.kind && !f.status && !f.search) return null;
  const text = f.search?.toLowerCase();
  return (p) =>
    // `both` is a customer and a vendor: asking for customers includes it.
    (!f.kind || p.kind === f.kind || (f.kind !== 'both' && p.kind === 'both'))
    && (!f.status || p.status === f.status)
    && (!text || p.name_lc.includes(text));
}

/** Lists the workspace's parties, newest first, one page at a time (CONTRACT §9). */
export const list = defineTool<Input>({
  name: 'parties.list',
  description:
    'List parties (customers, vendors) of the workspace, newest first; filter by kind, status or a case-insensitive name search. ' +
    'Pages: pass next_cursor back as cursor until it is absent. A filtered page may be short, even empty, and still carry next_cursor; ' +
    'total (the number of parties) is given only without filters.',
  risk: 'read',
  input: {
    type: 'object',
    additionalProperties: false,
    properties: {
      search: { type: 'string', minLength: 1, maxLength: 100 },
      kind: { enum: ['customer', 'vendor', 'both'] },
      status: { enum: ['active', 'archived'] },
      limit: { type: 'integer', minimum: 1, maximum: 100 },
      cursor: CURSOR_SCHEMA,
    },
  },
  async handler(input, ctx) {
    return listNewestFirst<PartyDoc, ReturnType<typeof partyView>>(parties(ctx.db), {
      workspace: ctx.workspace, cursor: input.cursor, limit: input.limit ?? 20, match: partyFilter(input) ?? undefined,
    }, partyView);
  },
});
