import { CuadraError, listNewestFirst, type ListAnswer } from '@cuadra/shared';
import type { Connection } from 'mongoose';
import { parties, type PartyDoc } from '../models/party.ts';

import type { RecordsQuery } from '@cuadra/shared';
export type { RecordsQuery };

/** The sources the crm subgraph answers for the composite `records.list`, so far. */
export const CRM_SOURCES = ['parties'] as const;

const KINDS = ['customer', 'vendor', 'both'];
const STATUSES = ['active', 'archived'];

/** The compact row of a party. */
function partyRow(p: PartyDoc) {
  return {
    id: p._id, kind: p.kind, name: p.name,
    tax_id: p.tax_id ? `${p.tax_id.number}${p.tax_id.check_digit === null ? '' : `-${p.tax_id.check_digit}`}` : null,
    email: p.email, phone: p.phone, tags: p.tags, status: p.status,
  };
}

/**
 * Answers `records.list` for the crm sources: `{source, rows, total?, next_cursor?}`, newest first,
 * one page at a time (CONTRACT §9: `total` only without filters, from the counter kept on write).
 * parties: `kind` customer (includes `both`), vendor (includes `both`) or both; `status` active or
 * archived; `search` a case-insensitive substring of the name, the tax id number or the e-mail.
 */
export async function crmRecords(db: Connection, workspace: string, q: RecordsQuery): Promise<{ source: string } & ListAnswer<Record<string, unknown>>> {
  if (!(CRM_SOURCES as readonly string[]).includes(q.source)) {
    throw new CuadraError('invalid_input', `The crm subgraph does not answer the source "${q.source}".`, { field: '/source' });
  }
  const limit = Math.min(Math.max(Math.trunc(q.limit ?? 8), 1), 100);
  if (q.kind && !KINDS.includes(q.kind)) throw new CuadraError('invalid_input', `"${q.kind}" is not a kind of parties (customer, vendor, both).`, { field: '/kind' });
  if (q.status && !STATUSES.includes(q.status)) throw new CuadraError('invalid_input', `"${q.status}" is not a status of parties (active, archived).`, { field: '/status' });
  const text = q.search?.toLowerCase();
  const match = q.kind || q.status || text
    ? (p: PartyDoc) =>
      (!q.kind || p.kind === q.kind || (q.kind !== 'both' && p.kind === 'both'))
      && (!q.status || p.status === q.status)
      && (!text || p.name_lc.includes(text) || (p.tax_id?.number ?? '').includes(text) || (p.email ?? '').toLowerCase().includes(text))
    : undefined;
  const page = await listNewestFirst<PartyDoc, Record<string, unknown>>(parties(db), { workspace, cursor: q.cursor, limit, match }, partyRow);
  return { source: q.source, ...page };
}
