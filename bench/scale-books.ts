// bench/scale.ts's receivables and payables (issue 33): posted invoices with their payments, and
// bills with theirs, seeded in bulk into a workspace so that every read finds what the tools would
// have written — and a sample made through the tools over HTTP, compared field by field.
//
// How the seed keeps the tools' shapes. A sample of each kind is made first through the tools over
// HTTP (`invoices.create` + `invoices.post` + `payments.register`, `bills.create` + `bills.post` +
// `bills.pay`), and the stored documents it left are the templates: every seeded invoice, payment,
// bill, bill payment and journal entry is a copy of the tool's own document with the fields that
// differ between documents set as the tool sets them (ids, numbers, party, dates, settlements,
// balances, positions). What the posts and payments add to the rollups is computed by the owners'
// own functions — `statusDelta` and the post operations' `booking` (invoices and bills), the open-item
// engine's `paymentApplied`, the payment ledgers' `completion`, the journal's `ledgerDeltas` — and
// summed in memory by `rollupChanges`, the one definition `applyRollupIntent` writes with, so the
// rollup documents hold exactly the counters the calls would have added (as the store holds them:
// the fields an upsert's `$inc`/`$set` made, `applied` empty). Positions are taken from each series'
// counter in one block (`assignPositions`, as a bulk load does); numbers from the workspace's
// numbering counter in one block; the due-date indexes by the owner's `addMany`; the invoices' and
// payments' recent index as `indexCreated` keys it. The ledger entries of those calls are appended
// by the services' own `Ledger` (bench/scale.ts), three per invoice and three per bill.
// Skipped (the tools would take hours here: ~20 durable store writes per call): the HTTP hop, the
// pipeline and each call's operation markers and pending-change markers (removed by the time a call
// answers) — and the amounts: every seeded document carries the sample's lines (one line of the
// same price), so the figures are the sample's times the count, which costs the reads the same.
import { assignPositions, positionKey } from '../shared/src/paging.ts';
import { addGramsOfMany, searchTextsOf, trigramsOf } from '../shared/src/search-grams.ts';
import type { Connection } from 'mongoose';
import { invoices, type InvoiceDoc } from '../subgraphs/invoices/src/modules/invoices/model.ts';
import { payments, type PaymentDoc } from '../subgraphs/invoices/src/modules/payments/model.ts';
import { bills, type BillDoc } from '../subgraphs/invoices/src/modules/bills/model.ts';
import { billPayments, BILL_PAYMENTS } from '../subgraphs/invoices/src/modules/bills/payments.ts';
import { billPostOperation, PAYABLES } from '../subgraphs/invoices/src/modules/bills/ops.ts';
import { billsDue } from '../subgraphs/invoices/src/modules/bills/due.ts';
import { invoicePostOperation, RECEIVABLES, searchText, statusDelta } from '../subgraphs/invoices/src/modules/invoices/ops.ts';
import { CUSTOMER_PAYMENTS } from '../subgraphs/invoices/src/modules/payments/ops.ts';
import { invoicesDue } from '../subgraphs/invoices/src/modules/invoices/due.ts';
import { journalEntries, ledgerDeltas, LEDGER_ROLLUP_VERSION } from '../subgraphs/invoices/src/books/journal.ts';
import { rollupChanges, type RollupDelta } from '../subgraphs/invoices/src/books/rollup-intents.ts';
import { rollups } from '../subgraphs/invoices/src/books/rollup-store.ts';
import { backfillLeaders } from '../subgraphs/invoices/src/books/party-leaders.ts';
import { paymentApplied, paymentEntry, type OpenItemDoc, type OpenItemLedger, type PaymentLedger, type PaymentRecord } from '../subgraphs/invoices/src/open-items/index.ts';
import { recentId } from '../subgraphs/invoices/src/lib/recent.ts';
import { counterId, counters } from '../subgraphs/invoices/src/lib/settings.ts';
import { addDays } from '../subgraphs/invoices/src/lib/money.ts';
import { rng } from './invoices-h2.ts';

type Doc = Record<string, any>;
type Call = (tool: string, input: unknown) => Promise<any>;

/** A seeded workspace's sample, made through the tools: the ids of what it made. */
export interface BooksSample {
  invoice: string;
  payment: string;
  bill: string;
  billPayment: string;
  customer: { id: string; name: string };
  vendor: { id: string; name: string };
}

/** Makes one paid invoice and one paid bill through the tools (the templates of the seed, and what it is compared with). */
export async function sampleThroughTools(call: Call, today: string, customer: { id: string; name: string }, vendor: { id: string; name: string }): Promise<BooksSample> {
  await call('einvoicing.configure', {
    issuer: { nit: '900373115-3', name: 'Cuadra Demo SAS' }, technical_key: 'fc8eac422eba16e22ffd8c6f94b3f40a6e38162c', software_pin: '75315',
    numbering: { invoice: { prefix: 'SETP', from: 990000001, to: 995000000, resolution: '18760000001' }, credit_note: { prefix: 'NC', from: 1, to: 5000 } },
  });
  const draft = (await call('invoices.create', {
    customer_id: customer.id, currency: 'COP', issue_date: today, due_date: addDays(today, 30),
    lines: [{ description: 'Consultoría', quantity: 1, unit_price: 15_000_000, tax_rate_ppm: 190000 }],
  })).invoice;
  const invoice = (await call('invoices.post', { id: draft.id })).invoice;
  const payment = (await call('payments.register', { customer_id: customer.id, amount: invoice.balance, currency: 'COP', date: today, invoices: [{ invoice_id: invoice.id }] })).payment;
  const bill = (await call('bills.create', {
    vendor_id: vendor.id, supplier_number: 'FE-SAMPLE', currency: 'COP', issue_date: today, due_date: addDays(today, 30),
    lines: [{ description: 'Arriendo', account: '5120', quantity: 1, unit_price: 8_000_000, tax_rate_ppm: 190000 }],
  })).bill;
  const posted = (await call('bills.post', { id: bill.id })).bill;
  const billPayment = (await call('bills.pay', { vendor_id: vendor.id, amount: posted.balance, currency: 'COP', date: today, bills: [{ bill_id: bill.id }] })).payment;
  return { invoice: invoice.id, payment: payment.id, bill: bill.id, billPayment: billPayment.id, customer, vendor };
}

/** Adds `inc` and `set` at their dotted paths, as the store applies an upsert's `$inc` and `$set`. */
function applyChange(doc: Doc, path: string, value: number | string, add: boolean): void {
  const keys = path.split('.');
  let at = doc;
  for (const k of keys.slice(0, -1)) at = at[k] ??= {};
  const last = keys[keys.length - 1];
  at[last] = add ? (at[last] ?? 0) + (value as number) : value;
}

/** The rollup documents of one workspace, summed in memory by the one definition the writes use. */
class RollupSums {
  readonly docs = new Map<string, Doc>();
  readonly workspace: string;
  constructor(workspace: string) {
    this.workspace = workspace;
  }
  add(deltas: readonly RollupDelta[]): void {
    for (const delta of deltas) {
      for (const change of rollupChanges(this.workspace, delta)) {
        const doc = this.docs.get(change._id) ?? { _id: change._id, applied: [], workspace: this.workspace, currency: change.currency, grain: change.grain, period: change.period };
        for (const [k, v] of Object.entries(change.inc)) applyChange(doc, k, v, true);
        for (const [k, v] of Object.entries(change.set ?? {})) applyChange(doc, k, v, false);
        this.docs.set(change._id, doc);
      }
    }
  }
}

/** What a payment adds to the rollups: its ledger's completion counters on its date and each due date it lowered (open-items/payment.ts paymentIntent). */
function paymentDeltas<P extends PaymentRecord, D extends OpenItemDoc>(ledger: PaymentLedger<P, D>, payment: P, dueDate: string, applied: number): RollupDelta[] {
  const currency = ledger.rollupCurrency(payment.currency);
  return [{ day: payment.date, currency, inc: ledger.completion(payment).inc }, { day: payment.date, currency, inc: {}, due: { date: dueDate, amount: -applied } }];
}

/**
 * Inserts in batches of 2,000, unordered. A batch cut off by the connection (the store starved of CPU
 * under a long niced seed stops answering the driver's monitor) is sent again: what it had stored is
 * refused as a duplicate key and the rest is written.
 */
async function insertAll(db: Connection, collection: string, docs: Doc[]): Promise<void> {
  for (let i = 0; i < docs.length; i += 2_000) {
    for (let attempt = 1; ; attempt++) {
      try {
        await db.collection(collection).insertMany(docs.slice(i, i + 2_000) as never[], { ordered: false });
        break;
      } catch (err) {
        const e = err as { code?: number; writeErrors?: { code: number }[]; name?: string };
        if (e.code === 11000 || (Array.isArray(e.writeErrors) && e.writeErrors.length > 0 && e.writeErrors.every((w) => w.code === 11000))) break;
        if (attempt >= 5 || !/Network|PoolCleared|BulkWriteError/.test(`${e.name} ${(err as Error).message}`)) throw err;
        await new Promise((r) => setTimeout(r, 2_000 * attempt));
      }
    }
  }
}

/** `count` positions of a series, as a bulk load takes them (one block): a function from index to {pos, pos_key}. */
async function positions(db: Connection, series: string, workspace: string, count: number) {
  const first = await assignPositions(db, series, workspace, count);
  return (i: number) => ({ pos: first + i, pos_key: positionKey(series, workspace, first + i) });
}

/** The journal entry a post or payment writes, copied from the tool's own entry: lines, heading and source of this one, counted. */
function journalDoc(template: Doc, workspace: string, entry: { source: Doc; lines: Doc[]; heading: { id: string; date: string; currency: string; memo: string } }, at: Date, position: { pos: number; pos_key: string }): Doc {
  return {
    ...template, _id: entry.heading.id, workspace, date: entry.heading.date, currency: entry.heading.currency, memo: entry.heading.memo, source: entry.source, lines: entry.lines,
    created_at: at, ...position, pending_rollups: [], pending_count: 0, rolled: LEDGER_ROLLUP_VERSION,
  };
}

/** The document the engine leaves after applying `amount` of payment `ref` on `date` (its fields and pushes), and the rollup deltas of that change. */
function settled<D extends OpenItemDoc>(ledger: OpenItemLedger<D>, doc: D, ref: string, date: string, amount: number, at: Date): { doc: D; deltas: RollupDelta[] } {
  const change = paymentApplied(ledger, doc, ref, date, amount);
  return { doc: { ...doc, ...change.set, settlements: [...doc.settlements, ...(change.push?.settlements ? [change.push.settlements] : [])], rev: (doc as Doc).rev + 1, updated_at: at }, deltas: change.deltas ?? [] };
}

/**
 * Seeds `n` posted invoices (85 % paid by a payment each, 5 % half paid, 10 % open) over the last
 * year for `customers` and `m` posted bills (80 % paid, 5 % half, 15 % open) for `vendors`, in the
 * shapes of the `sample` the tools made in this workspace (`customers[0]` gets one invoice, in the
 * middle of the history). Returns the counts it wrote.
 */
export async function seedBooks(db: Connection, workspace: string, sample: BooksSample, customers: { id: string; name: string }[], vendors: { id: string; name: string }[], n: number, m: number, today: string) {
  const rand = rng(n + 7);
  const T = {
    invoice: (await invoices(db).findById(sample.invoice).lean()) as unknown as InvoiceDoc,
    payment: (await payments(db).findById(sample.payment).lean()) as unknown as PaymentDoc,
    bill: (await bills(db).findById(sample.bill).lean()) as unknown as BillDoc,
    billPayment: (await billPayments(db).findById(sample.billPayment).lean()) as unknown as Doc,
    entry: (await journalEntries(db).findById(`je_${sample.invoice}`).lean()) as unknown as Doc,
  };
  const sums = new RollupSums(workspace);
  const recent = new Map<string, string[]>();
  const addRecent = (source: string, at: Date, id: string) => {
    const key = recentId(workspace, source, at.toISOString().slice(0, 10));
    recent.set(key, [...(recent.get(key) ?? []), id]);
  };
  const dueInvoices: { workspace: string; date: string; id: string }[] = [];
  const dueBills: { workspace: string; date: string; id: string }[] = [];
  // Issued in date order, as a live workspace creates them (positions rise with the dates).
  // BENCH_PARTY_SKEW=1: customers and vendors drawn skewed (index ⌊n·u⁴⌋: the first ~10 of 20,000 get ~20 % of the documents), as a business's are; default uniform.
  const skew = process.env.BENCH_PARTY_SKEW === '1';
  const pick = (n: number) => Math.min(n - 1, Math.floor(n * (skew ? rand() ** 4 : rand())));
  const days = (count: number) => Array.from({ length: count }, () => Math.floor(rand() * 365)).sort((a, b) => b - a).map((back) => addDays(today, -back));

  // Invoices: numbers from the workspace's range in one block, as nextNumber hands them out one by one.
  const prefix = T.invoice.number!.replace(/\d+$/, '');
  const before = await counters(db).findOneAndUpdate({ _id: counterId(workspace, 'invoice', prefix) }, { $inc: { next: n } }, { returnDocument: 'before' }).lean();
  const firstNumber = (before as { next: number }).next;
  const invPos = await positions(db, 'invoices', workspace, n);
  const payCount = { n: 0 };
  const invoiceDays = days(n);
  const payPlans = invoiceDays.map(() => {
    const r = rand();
    return { share: r < 0.85 ? 1 : r < 0.9 ? 0.5 : 0, after: Math.floor(rand() * 40) };
  });
  const paying = payPlans.filter((p, i) => p.share > 0 && addDays(invoiceDays[i], p.after) <= today).length;
  const payPos = await positions(db, 'payments', workspace, paying);
  const billDays = days(m);
  const billPlans = billDays.map(() => {
    const r = rand();
    return { share: r < 0.8 ? 1 : r < 0.85 ? 0.5 : 0, after: Math.floor(rand() * 40) };
  });
  const billsPaying = billPlans.filter((p, i) => p.share > 0 && addDays(billDays[i], p.after) <= today).length;
  const entryPos = await positions(db, 'journal_entries', workspace, n + paying + m + billsPaying);
  let entries = 0;
  const out = { invoices: [] as Doc[], payments: [] as Doc[], entries: [] as Doc[], bills: [] as Doc[], billPayments: [] as Doc[] };
  const ctx = { db, workspace, now: new Date() };
  for (let i = 0; i < n; i++) {
    const issue = invoiceDays[i];
    const at = new Date(`${issue}T15:00:00Z`);
    // customers[0] has one invoice, in the middle of the history: a search for it matches one.
    const customer = i === Math.floor(n / 2) ? customers[0] : customers[1 + pick(customers.length - 1)];
    const id = `inv_s${i}_${workspace.slice(-6)}`;
    const seq = firstNumber + i;
    const number = `${prefix}${seq}`;
    const draft: InvoiceDoc = {
      ...T.invoice, _id: id, workspace, customer_id: customer.id, customer: { ...T.invoice.customer, name: customer.name }, issue_date: issue, due_date: addDays(issue, 30),
      status: 'draft', number, number_seq: seq, number_key: `${workspace}:invoice:${number}`, paid: 0, balance: T.invoice.amount_due, settlements: [], closed_on: null,
      journal_entry_id: null, posting: null, rev: 0, created_at: at, updated_at: at, posted_at: null, ...invPos(i),
    } as InvoiceDoc;
    sums.add(statusDelta(draft, null, 'draft'));
    addRecent('invoices', at, id);
    const booking = await invoicePostOperation.posting.booking({ ...ctx, claim: { at, regime: null } } as never, draft);
    sums.add(booking.deltas);
    const entry = journalDoc(T.entry, workspace, booking as never, at, entryPos(entries++));
    sums.add(ledgerDeltas(entry as never));
    out.entries.push(entry);
    let doc: InvoiceDoc = { ...draft, ...booking.set, cufe: T.invoice.cufe, issue_time: T.invoice.issue_time, status: 'posted', journal_entry_id: booking.heading.id, posted_at: at, rev: 1, updated_at: at };
    const plan = payPlans[i];
    const payDay = addDays(issue, plan.after);
    if (plan.share > 0 && payDay <= today) {
      const amount = plan.share === 1 ? doc.balance : Math.floor(doc.balance / 2);
      const payId = `pay_s${payCount.n}_${workspace.slice(-6)}`;
      const payAt = new Date(`${payDay}T16:00:00Z`);
      const applied = settled(RECEIVABLES, doc, payId, payDay, amount, payAt);
      doc = applied.doc;
      sums.add(applied.deltas);
      const payment: PaymentDoc = {
        ...T.payment, _id: payId, workspace, customer_id: customer.id, customer_name: customer.name, search_lc: `${customer.name} `.toLowerCase(), amount, date: payDay,
        allocations: [{ invoice_id: id, number, requested: null, applied: amount }], applied: amount, unapplied: 0, journal_entry_id: `je_${payId}`,
        created_at: payAt, updated_at: payAt, ...payPos(payCount.n++),
      } as PaymentDoc;
      sums.add(paymentDeltas(CUSTOMER_PAYMENTS, payment, doc.due_date, amount));
      addRecent('payments', payAt, payId);
      const payEntry = journalDoc(T.entry, workspace, paymentEntry(CUSTOMER_PAYMENTS, payment) as never, payAt, entryPos(entries++));
      sums.add(ledgerDeltas(payEntry as never));
      out.payments.push(payment);
      out.entries.push(payEntry);
    }
    if (RECEIVABLES.isOpen(doc)) dueInvoices.push({ workspace, date: doc.due_date, id });
    out.invoices.push({ ...doc, search_lc: searchText(number, customer.name, doc.notes) });
  }

  // Bills: the vendor's own number, unique per vendor.
  const billPos = await positions(db, 'bills', workspace, m);
  const bpyPos = await positions(db, billPayments(db).collection.collectionName, workspace, billsPaying);
  let bpyCount = 0;
  for (let i = 0; i < m; i++) {
    const issue = billDays[i];
    const at = new Date(`${issue}T15:00:00Z`);
    const vendor = vendors[pick(vendors.length)];
    const id = `bil_s${i}_${workspace.slice(-6)}`;
    const supplierNumber = `FE-${i}`;
    const draft = {
      ...T.bill, _id: id, workspace, vendor_id: vendor.id, vendor: { ...T.bill.vendor, name: vendor.name }, supplier_number: supplierNumber,
      supplier_key: String((T.bill as Doc).supplier_key).replace(sample.vendor.id, vendor.id).replace('FE-SAMPLE', supplierNumber),
      search_lc: String(T.bill.search_lc).replace('fe-sample', supplierNumber.toLowerCase()).replace(sample.vendor.name.toLowerCase(), vendor.name.toLowerCase()),
      issue_date: issue, due_date: addDays(issue, 30), status: 'draft', paid: 0, balance: T.bill.amount_due, settlements: [], closed_on: null, journal_entry_id: null, posting: null,
      rev: 0, created_at: at, updated_at: at, posted_at: null, ...billPos(i),
    } as BillDoc;
    sums.add(PAYABLES.statusDelta(draft, null, 'draft'));
    const booking = await billPostOperation.posting.booking({ ...ctx, claim: { at, regime: null } } as never, draft);
    sums.add(booking.deltas);
    const entry = journalDoc(T.entry, workspace, booking as never, at, entryPos(entries++));
    sums.add(ledgerDeltas(entry as never));
    out.entries.push(entry);
    let doc: BillDoc = { ...draft, ...booking.set, status: 'posted', journal_entry_id: booking.heading.id, posted_at: at, rev: 1, updated_at: at } as BillDoc;
    const plan = billPlans[i];
    const payDay = addDays(issue, plan.after);
    if (plan.share > 0 && payDay <= today) {
      const amount = plan.share === 1 ? doc.balance : Math.floor(doc.balance / 2);
      const payId = `bpy_s${bpyCount}_${workspace.slice(-6)}`;
      const payAt = new Date(`${payDay}T16:00:00Z`);
      const applied = settled(PAYABLES, doc, payId, payDay, amount, payAt);
      doc = applied.doc;
      sums.add(applied.deltas);
      const payment = {
        ...T.billPayment, _id: payId, workspace, vendor_id: vendor.id, vendor_name: vendor.name, search_lc: `${vendor.name} `.toLowerCase(), amount, date: payDay,
        allocations: [{ bill_id: id, supplier_number: supplierNumber, requested: amount, applied: amount }], journal_entry_id: `je_${payId}`,
        created_at: payAt, updated_at: payAt, ...bpyPos(bpyCount++),
      };
      sums.add(paymentDeltas(BILL_PAYMENTS, payment as never, doc.due_date, amount));
      const payEntry = journalDoc(T.entry, workspace, paymentEntry(BILL_PAYMENTS, payment as never) as never, payAt, entryPos(entries++));
      sums.add(ledgerDeltas(payEntry as never));
      out.billPayments.push(payment);
      out.entries.push(payEntry);
    }
    if (PAYABLES.isOpen(doc)) dueBills.push({ workspace, date: doc.due_date, id });
    out.bills.push(doc);
  }

  // Their search trigrams first (search-grams.ts), as the tools keep them before a document is written;
  // the series were marked indexed by the sample's first documents, made through the tools.
  const series: [string, Doc[]][] = [['invoices', out.invoices], ['payments', out.payments], ['bills', out.bills], [billPayments(db).collection.collectionName, out.billPayments]];
  for (const [name, docs] of series) {
    for (let i = 0; i < docs.length; i += 2_000) {
      await addGramsOfMany(db, name, workspace, docs.slice(i, i + 2_000).map((d) => ({ pos: d.pos as number, grams: trigramsOf(searchTextsOf(d as { search_lc?: string })) })));
    }
  }
  await insertAll(db, 'invoices', out.invoices);
  await insertAll(db, 'payments', out.payments);
  await insertAll(db, 'bills', out.bills);
  await insertAll(db, billPayments(db).collection.collectionName, out.billPayments);
  await insertAll(db, 'journal_entries', out.entries);
  await invoicesDue.addMany(db, dueInvoices);
  await billsDue.addMany(db, dueBills);
  for (const [key, ids] of recent) await db.collection('recent_index').updateOne({ _id: key } as never, { $addToSet: { ids: { $each: ids } } }, { upsert: true });
  // The sample's own rollup documents exist already: the seed's counters are added to them (`$inc`), the others inserted.
  const existing = new Set((await rollups(db).find({ _id: { $in: [...sums.docs.keys()] } }, { _id: 1 }).lean()).map((d) => d._id));
  const fresh = [...sums.docs.values()].filter((d) => !existing.has(d._id));
  await insertAll(db, 'rollups', fresh);
  for (const d of [...sums.docs.values()].filter((x) => existing.has(x._id))) {
    const $inc: Record<string, number> = {};
    const $set: Record<string, unknown> = {};
    const walk = (o: Doc, path: string) => {
      for (const [k, v] of Object.entries(o)) {
        const p = path ? `${path}.${k}` : k;
        if (typeof v === 'number') $inc[p] = v;
        else if (typeof v === 'string') $set[p] = v;
        else if (v && typeof v === 'object' && !Array.isArray(v)) walk(v, p);
      }
    };
    for (const field of ['v', 'c', 'e']) if (d[field]) walk(d[field], field);
    if (d.n) walk(d.n, 'n');
    await rollups(db).collection.updateOne({ _id: d._id } as never, { $inc, ...(Object.keys($set).length ? { $set } : {}) } as never);
  }
  // The leaders of every day and month the seed wrote (top_customers, top_vendors), from its per-party counters, as the start-up backfill builds them.
  await backfillLeaders(db, workspace);
  // The largest rollup documents (what a post or payment rewrites, and a read takes whole unless it projects): a month's document or one of its shards.
  const size = (d: Doc) => Buffer.byteLength(JSON.stringify(d));
  const all = sums.docs.get(`${workspace}|COP|a|all`);
  const months = [...sums.docs.values()].filter((d) => d.grain === 'm' && d.currency === 'COP');
  // A month's customers are spread over its shards (books/rollup-store.ts partyShardId): counted by period.
  const customersByMonth = new Map<string, number>();
  for (const d of months) customersByMonth.set(d.period, (customersByMonth.get(d.period) ?? 0) + Object.keys(d.c ?? {}).length);
  const largest = { all_time_kb: all ? Math.round(size(all) / 1024) : 0, largest_month_kb: Math.round(Math.max(0, ...months.map(size)) / 1024), customers_in_largest_month: Math.max(0, ...customersByMonth.values()) };
  return { invoices: out.invoices.length, payments: out.payments.length, bills: out.bills.length, billPayments: out.billPayments.length, entries: out.entries.length, rollups: sums.docs.size, ...largest };
}

/** Field names and types of a document, `_runs` (the pipeline's stamp of the call that wrote it) left out. */
function kinds(d: Doc | null): string {
  const kind = (v: unknown) => v === null ? 'null' : Array.isArray(v) ? 'array' : v instanceof Date ? 'date' : typeof v;
  return JSON.stringify(Object.entries(d ?? {}).filter(([k]) => k !== '_runs').map(([k, v]) => [k, kind(v)]).sort());
}

/** Each seeded kind of document beside the one the tools made: the same fields, of the same types (throws on the first that differs). */
export async function compareBookShapes(db: Connection, workspace: string, sample: BooksSample): Promise<void> {
  const pairs: [string, string, Doc][] = [
    ['invoices', sample.invoice, { status: 'paid' }], ['payments', sample.payment, {}], ['bills', sample.bill, { status: 'paid' }],
    [billPayments(db).collection.collectionName, sample.billPayment, {}], ['journal_entries', `je_${sample.invoice}`, {}], ['journal_entries', `je_${sample.payment}`, {}],
  ];
  for (const [collection, id, filter] of pairs) {
    const tool = await db.collection(collection).findOne({ _id: id } as never);
    const seededId = collection === 'journal_entries' ? (id.includes('pay_') ? /^je_pay_s/ : /^je_inv_s/) : new RegExp(`^${id.slice(0, 3)}_s`);
    const seeded = await db.collection(collection).findOne({ workspace, _id: seededId, ...filter } as never);
    if (!seeded) throw new Error(`no seeded document in ${collection}`);
    const [a, b] = [kinds(tool as Doc), kinds(seeded as Doc)];
    if (a !== b) throw new Error(`a seeded ${collection} document's shape differs from the tool's:\n tool ${a}\n seed ${b}`);
  }
}

/** Deep equality of two plain values, as JSON with sorted keys. */
function sameJson(a: unknown, b: unknown): boolean {
  const norm = (v: unknown): unknown => Array.isArray(v) ? v.map(norm) : v && typeof v === 'object' && !(v instanceof Date) ? Object.fromEntries(Object.entries(v).sort(([x], [y]) => x.localeCompare(y)).map(([k, x]) => [k, norm(x)])) : v;
  return JSON.stringify(norm(a)) === JSON.stringify(norm(b));
}

/**
 * The seed's arithmetic checked against the tools: the sample's history (its invoice and bill as
 * drafts, posted, paid) run through the same functions the seed uses must give the journal lines
 * the tools posted and exactly the rollup documents the tools wrote (counters, customers, names,
 * due-date changes) — before anything is seeded in `workspace`. Throws on the first difference.
 */
export async function checkSampleArithmetic(db: Connection, workspace: string, sample: BooksSample): Promise<number> {
  const ctx = { db, workspace, now: new Date() };
  const sums = new RollupSums(workspace);
  const entryLines = async (id: string) => ((await journalEntries(db).findById(id).lean()) as unknown as Doc).lines;
  const sameLines = async (entry: { heading: { id: string }; lines: unknown }) => {
    if (!sameJson(entry.lines, await entryLines(entry.heading.id))) throw new Error(`the seed's lines of ${entry.heading.id} differ from the tool's`);
    sums.add(ledgerDeltas({ ...(entry as Doc), date: (entry as Doc).heading.date, currency: (entry as Doc).heading.currency } as never));
  };
  const inv = (await invoices(db).findById(sample.invoice).lean()) as unknown as InvoiceDoc;
  const pay = (await payments(db).findById(sample.payment).lean()) as unknown as PaymentDoc;
  const invDraft = { ...inv, status: 'draft', paid: 0, balance: inv.amount_due, settlements: [], closed_on: null } as InvoiceDoc;
  sums.add(statusDelta(invDraft, null, 'draft'));
  const invBooking = await invoicePostOperation.posting.booking({ ...ctx, claim: { at: inv.posted_at!, regime: null } } as never, invDraft);
  sums.add(invBooking.deltas);
  await sameLines(invBooking);
  sums.add(settled(RECEIVABLES, { ...invDraft, status: 'posted' } as InvoiceDoc, pay._id, pay.date, pay.applied, pay.updated_at).deltas);
  sums.add(paymentDeltas(CUSTOMER_PAYMENTS, pay, inv.due_date, pay.applied));
  await sameLines(paymentEntry(CUSTOMER_PAYMENTS, pay));
  const bill = (await bills(db).findById(sample.bill).lean()) as unknown as BillDoc;
  const bpy = (await billPayments(db).findById(sample.billPayment).lean()) as unknown as Doc;
  const billDraft = { ...bill, status: 'draft', paid: 0, balance: bill.amount_due, settlements: [], closed_on: null } as BillDoc;
  sums.add(PAYABLES.statusDelta(billDraft, null, 'draft'));
  const billBooking = await billPostOperation.posting.booking({ ...ctx, claim: { at: bill.posted_at!, regime: null } } as never, billDraft);
  sums.add(billBooking.deltas);
  await sameLines(billBooking);
  sums.add(settled(PAYABLES, { ...billDraft, status: 'posted' } as BillDoc, bpy._id, bpy.date, bpy.amount, bpy.updated_at).deltas);
  sums.add(paymentDeltas(BILL_PAYMENTS, bpy as never, bill.due_date, bpy.amount));
  await sameLines(paymentEntry(BILL_PAYMENTS, bpy as never));
  const written = new Map((await rollups(db).find({ _id: { $in: [...sums.docs.keys()] } }).lean()).map((d) => [d._id, d as unknown as Doc]));
  const everyWritten = await rollups(db).countDocuments({ workspace });
  if (everyWritten !== sums.docs.size) throw new Error(`the tools wrote ${everyWritten} rollup documents in the sample's workspace, the seed's arithmetic ${sums.docs.size}`);
  for (const [id, mine] of sums.docs) {
    const theirs = written.get(id);
    for (const field of ['v', 'c', 'n', 'e', 'currency', 'grain', 'period']) {
      if (!sameJson(mine[field], theirs?.[field])) throw new Error(`rollup ${id}.${field}: the tools wrote ${JSON.stringify(theirs?.[field])}, the seed's arithmetic ${JSON.stringify(mine[field])}`);
    }
  }
  return sums.docs.size;
}
