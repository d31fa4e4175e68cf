import { CuadraError, defineModule, listNewestFirst, type SourceReader } from '@cuadra/shared';
import { emailRows, ROW_STATUSES, rowSeries, type RowDoc } from './model.ts';
import { list } from './tools/list.ts';

/**
 * records.list `email_rows`: the messages of one campaign (`ref` = the campaign id, required: rows
 * page per campaign), status in the rows' vocabulary, search of the name or address.
 */
const rowsSource: SourceReader = async (q, ctx) => {
  if (!q.ref) throw new CuadraError('invalid_input', 'email_rows needs ref: the campaign id.', { field: '/ref' });
  if (q.status && !(ROW_STATUSES as readonly string[]).includes(q.status)) throw new CuadraError('invalid_input', `"${q.status}" is not a status of email_rows (${ROW_STATUSES.join(', ')}).`, { field: '/status' });
  const text = q.search?.toLowerCase();
  const match = q.status || text ? (r: RowDoc) => (!q.status || r.status === q.status) && (!text || r.name.toLowerCase().includes(text) || r.address.includes(text)) : undefined;
  return listNewestFirst<RowDoc, Record<string, unknown>>(emailRows(ctx.db), { workspace: ctx.workspace, series: rowSeries(q.ref), cursor: q.cursor, limit: Math.min(Math.max(q.limit ?? 8, 1), 100), match },
    (r) => ({ id: r._id, campaign_id: r.campaign_id, party_id: r.party_id, name: r.name, address: r.address, status: r.status, sent_at: r.sent_at?.toISOString() ?? null }));
};

/** One row per recipient and campaign: the sending queue and what became of each message. */
export const emailRowsModule = defineModule({
  name: 'email_rows',
  tools: [list],
  models: [emailRows],
  reads: { sources: { email_rows: rowsSource } },
});
