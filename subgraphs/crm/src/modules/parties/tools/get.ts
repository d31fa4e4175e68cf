import { CuadraError, defineTool, ID_INPUT, listNewestFirst, nullable, TEXT_SCHEMA as TEXT } from '@cuadra/shared';
import { activities, ACTIVITY_VIEW_SCHEMA, activityView, type ActivityDoc } from '../../activities/model.ts';
import { deals, type DealDoc } from '../../deals/model.ts';
import { idsUnder, partyKey } from '../../deals/search.ts';
import { parties, PARTY_VIEW_SCHEMA, partyView } from '../model.ts';

const DEAL_ROW = {
  type: 'object', additionalProperties: false, required: ['id', 'title', 'amount', 'currency', 'stage_id', 'expected_close'],
  properties: { id: TEXT, title: TEXT, amount: { type: 'integer' }, currency: TEXT, stage_id: TEXT, expected_close: { type: ['string', 'null'] } },
} as const;
const INVOICE_ROW = {
  type: 'object', additionalProperties: false, required: ['id', 'number', 'status', 'total', 'balance', 'currency', 'due_date'],
  properties: { id: TEXT, number: { type: ['string', 'null'] }, status: TEXT, total: { type: 'number' }, balance: { type: 'number' }, currency: TEXT, due_date: { type: ['string', 'null'] } },
} as const;

/** How many of each the party's page shows. */
const SHOWN = 10;

/**
 * One party with what is going on with it: its open deals (read through the deals' party index by
 * `_id`, never by scanning), its latest activities, and its open invoices read from finance through
 * its graph (the read-only service assertion; null when finance does not answer now).
 */
export const get = defineTool({
  name: 'parties.get',
  description: 'Get one party (customer or vendor) by id, with its tax id, contacts, addresses, tags and custom field values, its open deals, its latest activities and its open invoices (from finance; null when finance cannot be read now).',
  risk: 'read',
  input: ID_INPUT,
  output: {
    type: 'object', additionalProperties: false, required: ['party', 'open_deals', 'activities', 'open_invoices'],
    properties: { party: PARTY_VIEW_SCHEMA, open_deals: { type: 'array', items: DEAL_ROW }, activities: { type: 'array', items: ACTIVITY_VIEW_SCHEMA }, open_invoices: nullable({ type: 'array', items: INVOICE_ROW }) },
  },
  async handler(input, ctx) {
    const p = await parties(ctx.db).findOne({ _id: input.id, workspace: ctx.workspace }).lean();
    if (!p) throw new CuadraError('not_found', `No party ${input.id} exists in this workspace.`);
    const ids = (await idsUnder(ctx.db, ctx.workspace, 'deal', partyKey(p._id))).slice(-500);
    const found: DealDoc[] = ids.length ? await deals(ctx.db).find({ _id: { $in: ids } }).lean<DealDoc[]>() : [];
    const openDeals = found.filter((d) => d.workspace === ctx.workspace && d.party_id === p._id && d.status === 'open')
      .sort((a, b) => new Date(b.updated_at).getTime() - new Date(a.updated_at).getTime()).slice(0, SHOWN)
      .map((d) => ({ id: d._id, title: d.title, amount: d.amount, currency: d.currency, stage_id: d.stage_id, expected_close: d.expected_close }));
    const recent = await listNewestFirst<ActivityDoc, ReturnType<typeof activityView>>(activities(ctx.db), { workspace: ctx.workspace, limit: SHOWN, match: (a) => a.party_id === p._id }, activityView);
    let openInvoices: unknown[] | null = null;
    if (ctx.graph) {
      const data = await ctx.graph('invoices', 'query($id: ID!) { invoices(customerId: $id, limit: 100) { id kind number status total balance currency dueDate } }', { id: p._id }).catch((err: unknown) => {
        ctx.log.warn({ err }, 'the open invoices of a party could not be read from finance');
        return null;
      });
      if (data) {
        const rows = data.invoices as { id: string; kind: string; number: string | null; status: string; total: number; balance: number; currency: string; dueDate: string | null }[];
        openInvoices = rows.filter((i) => i.kind === 'invoice' && i.balance > 0 && i.status !== 'draft' && i.status !== 'cancelled').slice(0, SHOWN)
          .map((i) => ({ id: i.id, number: i.number, status: i.status, total: i.total, balance: i.balance, currency: i.currency, due_date: i.dueDate }));
      }
    }
    return { party: partyView(p), open_deals: openDeals, activities: recent.rows, open_invoices: openInvoices };
  },
});
