// records.list / invoices.list / bills.list {search} over invoices, payments and bills served by
// the trigram index kept at write time (issue 33; shared/src/search-grams.ts), as parties' are:
// a search that matches one invoice of many finds it on its first page, whatever the workspace
// holds, and every answer is the one a scan of the workspace's documents gives (the substring
// test on `search_lc`, newest first) — after a create, an edit, a post (the number it gives), a
// payment and a bill, made through the tools.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { indexSearchable, type Principal } from '@cuadra/shared';
import type { TestSubgraph } from '@cuadra/shared/testing';
import { configuredWorkspace, draft, party, startInvoices, unwrap } from './setup.ts';
import { postedBill, vendor } from './bills-helpers.ts';
import { insertDraft, searchText } from '../src/modules/invoices/ops.ts';
import { invoices, type InvoiceDoc } from '../src/modules/invoices/model.ts';

let sg: TestSubgraph;
let owner: Principal;
const ids: Record<string, string> = {};
let number = '';
// More invoices than one page walks (16 buckets of 64 = 1,024 positions), newer than the ones sought.
const N = 1_100;

beforeAll(async () => {
  sg = await startInvoices();
  owner = await configuredWorkspace(sg);
  const zurbaran = await party(owner, { name: 'Zurbarán Quintero Ltda', kind: 'customer' });
  // The oldest: an invoice posted (its number then searchable), a draft whose notes are edited, a payment.
  const a = await draft(sg, owner, { customer_id: zurbaran, notes: 'Pedido 7788' });
  const posted = await sg.call('invoices.post', { id: a.id }, owner);
  expect(posted.ok).toBe(true);
  ids.posted = a.id;
  number = posted.output.invoice.number;
  const b = await draft(sg, owner, { notes: 'entrega normal' });
  ids.edited = b.id;
  expect((await sg.call('invoices.update', { id: b.id, notes: 'Entrega urgente bodega 5' }, owner)).ok).toBe(true);
  const paid = await sg.call('payments.register', { customer_id: zurbaran, amount: 1000000, currency: 'COP', date: '2026-11-20', reference: 'REF-QX91', invoices: [{ invoice_id: a.id }] }, owner);
  expect(paid.ok).toBe(true);
  ids.payment = paid.output.payment.id;
  const v = await vendor(owner, 'Ferretería Ximena SAS');
  ids.bill = (await postedBill(sg, owner, v, { supplier_number: 'PROV-XK55' })).id;
  const billPaid = await sg.call('bills.pay', { vendor_id: v, amount: 50000, currency: 'COP', date: '2026-11-20', reference: 'TRX-ZZ42', bills: [{ bill_id: ids.bill, amount: 50000 }] }, owner);
  expect(billPaid.ok).toBe(true);
  // Then N drafts, written by the path invoices.create takes (insertDraft), shaped like the edited one.
  const template = (await invoices(sg.db).findById(b.id).lean()) as unknown as InvoiceDoc & { pos?: number; pos_key?: string };
  const { pos: _pos, pos_key: _key, ...shape } = template;
  let next = 0;
  await Promise.all(Array.from({ length: 8 }, async () => {
    for (let i = next++; i < N; i = next++) {
      const name = `Cliente ${i} SAS`;
      await insertDraft({ db: sg.db, workspace: owner.workspace, now: new Date() }, {
        ...shape, _id: `inv_bulk_${i}`, number_key: `none:inv_bulk_${i}`, customer: { ...shape.customer, name }, notes: null, search_lc: searchText(null, name, null), pending_rollups: [], pending_count: 0,
      } as InvoiceDoc);
    }
  }));
}, 120_000);
afterAll(async () => {
  await sg?.close();
});

const records = async (query: Record<string, unknown>) => unwrap(await sg.graphql('query($q: JSON!) { invoicesRecords(query: $q) }', { q: query }, owner), 'invoicesRecords');

/** Every row records.list gives for a search, page after page (ids, in order), and how many pages. */
async function searched(source: string, search: string): Promise<{ ids: string[]; pages: number }> {
  const seen: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await records({ source, search, limit: 100, ...(cursor ? { cursor } : {}) });
    seen.push(...page.rows.map((r: { id: string }) => r.id));
    cursor = page.next_cursor;
    pages++;
  } while (cursor && pages < 40);
  return { ids: seen, pages };
}

/** The same answer from a scan: every document of the workspace whose search text holds the term, newest first. */
async function scanned(collection: string, search: string): Promise<string[]> {
  const docs = await sg.db.collection<{ _id: string; pos: number; search_lc: string }>(collection).find({ workspace: owner.workspace } as never).toArray();
  const term = search.toLowerCase();
  return docs.filter((d) => d.search_lc.includes(term)).sort((x, y) => y.pos - x.pos).map((d) => d._id);
}

describe('books search by index', () => {
  it('finds the one invoice that matches on the first page, with no cursor left', async () => {
    // A walk of positions stops after 1,024 of them with an empty page and a cursor; the index reads the match.
    const first = await records({ source: 'invoices', search: 'zurbarán quin' });
    expect({ rows: first.rows.map((r: { id: string }) => r.id), next: first.next_cursor }).toEqual({ rows: [ids.posted], next: undefined });
    // The number the post gave, the edited notes: found the same way.
    expect((await records({ source: 'invoices', search: number })).rows.map((r: { id: string }) => r.id)).toEqual([ids.posted]);
    expect((await records({ source: 'invoices', search: 'URGENTE bodega' })).rows.map((r: { id: string }) => r.id)).toEqual([ids.edited]);
    // invoices.list and bills.list read the same index.
    const listed = await sg.call('invoices.list', { search: 'pedido 7788' }, owner);
    expect({ ids: listed.output.rows.map((r: { id: string }) => r.id), next: listed.output.next_cursor }).toEqual({ ids: [ids.posted], next: undefined });
    expect((await sg.call('bills.list', { search: 'prov-xk5' }, owner)).output.rows.map((r: { id: string }) => r.id)).toEqual([ids.bill]);
  });

  it('answers every search as a scan of the workspace does (invoices, payments, bills)', async () => {
    for (const term of ['zurbarán', number, 'urgente', 'cliente 10', 'cliente 1', 'sas', 'nada así']) {
      expect((await searched('invoices', term)).ids, term).toEqual(await scanned('invoices', term));
    }
    // "cliente 10" matches Cliente 10, 100–109 and 1000–1099: 111 rows, two pages of at most 100.
    expect(await searched('invoices', 'cliente 10')).toMatchObject({ pages: 2 });
    expect((await searched('invoices', 'cliente 10')).ids).toHaveLength(111);
    for (const term of ['ref-qx91', 'zurbarán', 'qx9']) expect((await searched('payments', term)).ids, term).toEqual(await scanned('payments', term));
    expect((await searched('payments', 'ref-qx91')).ids).toEqual([ids.payment]);
    for (const term of ['prov-xk55', 'ferretería', 'xk5']) expect((await searched('bills', term)).ids, term).toEqual(await scanned('bills', term));
    expect((await searched('bills', 'prov-xk55')).ids).toEqual([ids.bill]);
    // The bill payment's reference is kept under its own series too.
    const grams = await sg.db.collection('search_grams').countDocuments({ _id: { $regex: `^bill_payments\\|${owner.workspace}\\|zz4\\|` } } as never);
    expect(grams).toBe(1);
  });

  it('indexes at start a workspace written before the index was kept', async () => {
    // A workspace whose invoices have no trigrams (written before they were kept): searches walk, correct but bounded…
    await sg.db.collection('search_grams').deleteMany({ _id: { $regex: `^invoices\\|${owner.workspace}\\|` } } as never);
    await sg.db.collection('search_grams_marks').deleteOne({ _id: `invoices|${owner.workspace}` } as never);
    expect(await records({ source: 'invoices', search: 'zurbarán quin' })).toMatchObject({ rows: [], next_cursor: expect.any(String) });
    // …until the start-up pass indexes it (and skips what is indexed already).
    const searchable = (d: { search_lc?: string }) => [d.search_lc];
    expect(await indexSearchable(invoices(sg.db), { searchable })).toBeGreaterThanOrEqual(1);
    const first = await records({ source: 'invoices', search: 'zurbarán quin' });
    expect({ rows: first.rows.map((r: { id: string }) => r.id), next: first.next_cursor }).toEqual({ rows: [ids.posted], next: undefined });
    expect((await searched('invoices', 'cliente 1')).ids).toEqual(await scanned('invoices', 'cliente 1'));
  });
});
