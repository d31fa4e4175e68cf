import { CuadraError, escapeRegex } from '@cuadra/shared';
import type { Connection } from 'mongoose';
import { parties, type PartyDoc } from '../models/party.ts';

/** A records source object (specification §2.5). */
export interface RecordsQuery {
  source: string;
  limit?: number;
  search?: string;
  kind?: string;
  status?: string;
  ref?: string;
}

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
 * Answers `records.list` for the crm sources: `{source, rows, total}`, newest first.
 * parties: `kind` customer (includes `both`), vendor (includes `both`) or both; `status` active or
 * archived; `search` a case-insensitive substring of the name, the tax id number or the e-mail.
 */
export async function crmRecords(db: Connection, workspace: string, q: RecordsQuery): Promise<{ source: string; rows: Record<string, unknown>[]; total: number }> {
  if (!(CRM_SOURCES as readonly string[]).includes(q.source)) {
    throw new CuadraError('invalid_input', `The crm subgraph does not answer the source "${q.source}".`, { field: '/source' });
  }
  const limit = Math.min(Math.max(Math.trunc(q.limit ?? 8), 1), 100);
  const filter: Record<string, unknown> = { workspace };
  if (q.kind) {
    if (!KINDS.includes(q.kind)) throw new CuadraError('invalid_input', `"${q.kind}" is not a kind of parties (customer, vendor, both).`, { field: '/kind' });
    filter.kind = q.kind === 'both' ? 'both' : { $in: [q.kind, 'both'] };
  }
  if (q.status) {
    if (!STATUSES.includes(q.status)) throw new CuadraError('invalid_input', `"${q.status}" is not a status of parties (active, archived).`, { field: '/status' });
    filter.status = q.status;
  }
  if (q.search) {
    const text = escapeRegex(q.search.toLowerCase());
    filter.$or = [{ name_lc: { $regex: text } }, { 'tax_id.number': { $regex: text } }, { email: { $regex: text, $options: 'i' } }];
  }
  const model = parties(db);
  const [rows, total] = await Promise.all([model.find(filter).sort({ created_at: -1, _id: -1 }).limit(limit).lean(), model.countDocuments(filter)]);
  return { source: q.source, rows: rows.map(partyRow), total };
}
