import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestSubgraph } from '@cuadra/shared/testing';
import { createLogger, domainEventId, systemEventsFor, type LedgerEntry, type Principal } from '@cuadra/shared';
import { changeInvoice } from '../src/modules/invoices/ops.ts';
import { invoicesDue } from '../src/modules/invoices/due.ts';
import { dayEndedEverywhere, noteOverdueInvoices } from '../src/modules/invoices/overdue.ts';
import { andina, configuredWorkspace, draft, startInvoices } from './setup.ts';

/*
 * "An invoice becoming overdue" as an event on the ledger (issue 37): finance's background sweep
 * records `invoice.overdue` once per invoice and due date, as the system, on the workspace's
 * hash-chained ledger — against the invoices subgraph on the MongoDB-protocol server.
 */

let sg: TestSubgraph;
beforeAll(async () => {
  sg = await startInvoices();
});
afterAll(async () => {
  await sg?.close();
});

/** The tool's output (sg.output), thrown when refused. */
const out = (tool: string, input: unknown, owner: Principal) => sg.output(tool, input, owner);

/** One sweep pass of the invoices module's overdue watch, as the service's sweep runs it, at `now`. */
const pass = (now = new Date()) => noteOverdueInvoices({ db: sg.db, now, log: createLogger('test', 'silent'), events: systemEventsFor(sg.governance.ledger, 'invoices', 'invoices') });

/** The workspace's `invoice.overdue` entries, oldest first, read from the collection. */
async function overdueEntries(owner: Principal): Promise<LedgerEntry[]> {
  return (await sg.governance.ledger.entries.find({ workspace: owner.workspace, tool: 'invoice.overdue' }, { _id: 0 }).lean()).sort((a, b) => a.seq - b.seq);
}

/** Canonical JSON written here, apart from the ledger's: keys sorted, undefined dropped. */
function canonical(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  return `{${Object.keys(v).filter((k) => (v as any)[k] !== undefined).sort().map((k) => `${JSON.stringify(k)}:${canonical((v as any)[k])}`).join(',')}}`;
}

describe('invoice.overdue on the ledger', () => {
  it('once per invoice and due date, as the system, even with three sweeps at once; paid and not-yet-due invoices are not noted', async () => {
    const owner = await configuredWorkspace(sg);
    // Due 2026-11-04, unpaid: 2 × 15,000,000 = 30,000,000 + VAT 19 % 5,700,000 = 35,700,000 open.
    const late = (await out('invoices.post', { id: (await draft(sg, owner, { issue_date: '2026-10-05', due_date: '2026-11-04' })).id }, owner)).invoice;
    // Due 2026-11-04 too, paid in full on 2026-11-01: nothing to note.
    const paid = (await out('invoices.post', { id: (await draft(sg, owner, { issue_date: '2026-10-05', due_date: '2026-11-04' })).id }, owner)).invoice;
    await out('payments.register', { customer_id: await andina(owner), amount: 35700000, currency: 'COP', date: '2026-11-01', invoices: [{ invoice_id: paid.id }] }, owner);
    // Due 2026-11-10, paid 10,000,000 of 35,700,000: still overdue with 25,700,000.
    const partly = (await out('invoices.post', { id: (await draft(sg, owner, { issue_date: '2026-10-11', due_date: '2026-11-10' })).id }, owner)).invoice;
    await out('payments.register', { customer_id: await andina(owner), amount: 10000000, currency: 'COP', date: '2026-11-05', invoices: [{ invoice_id: partly.id }] }, owner);
    // Due a month from now: not overdue.
    const future = new Date(Date.now() + 30 * 86_400_000).toISOString().slice(0, 10);
    const notYet = (await out('invoices.post', { id: (await draft(sg, owner, { issue_date: '2026-11-02', due_date: future })).id }, owner)).invoice;

    // Two passes side by side and the service's own sweep at the same time.
    await Promise.all([pass(), pass(), sg.sweep()]);
    await pass();
    const entries = await overdueEntries(owner);
    expect(entries.map((e) => e.event!.subject).sort()).toEqual([late.id, partly.id].sort());
    const lateEntry = entries.find((e) => e.event!.subject === late.id)!;
    expect(lateEntry).toMatchObject({
      id: domainEventId(owner.workspace, 'invoice.overdue', late.id, '2026-11-04'), module: 'invoices', outcome: 'ok',
      actor: { type: 'service', id: 'invoices.invoices' }, credential_id: 'system:invoices',
      event: { subject: late.id, key: '2026-11-04', data: { invoice_id: late.id, number: late.number, customer_id: late.customer_id, due_date: '2026-11-04', balance: 35700000, currency: 'COP' } },
    });
    expect(entries.find((e) => e.event!.subject === partly.id)!.event!.data.balance).toBe(25700000);
    expect(entries.some((e) => e.event!.subject === paid.id || e.event!.subject === notYet.id)).toBe(false);

    // Tamper-evident: the entry's hash recomputed here, SHA-256(prev_hash ‖ canonical entry without its hash).
    const { hash, ...body } = lateEntry;
    expect(createHash('sha256').update(body.prev_hash + canonical(body)).digest('hex')).toBe(hash);
    expect((await sg.governance.ledger.verify(owner.workspace, { full: true })).ok).toBe(true);
    // Changing the stored event (its balance) breaks the chain.
    await sg.governance.ledger.entries.updateOne({ _id: lateEntry.id } as never, { $set: { 'event.data.balance': 1 } });
    expect((await sg.governance.ledger.verify(owner.workspace, { full: true })).ok).toBe(false);
    await sg.governance.ledger.entries.updateOne({ _id: lateEntry.id } as never, { $set: { 'event.data.balance': 35700000 } });
    expect((await sg.governance.ledger.verify(owner.workspace, { full: true })).ok).toBe(true);

    // The days are settled: nothing left watched for this workspace before today, and a pass records nothing more.
    expect((await invoicesDue.watchedBefore(sg.db, dayEndedEverywhere(new Date()), 10_000)).filter((d) => d.workspace === owner.workspace)).toEqual([]);
    await pass();
    expect(await overdueEntries(owner)).toHaveLength(2);

    // The not-yet-due one, once its day has passed everywhere (the sweep's clock two days after it): noted once.
    const later = new Date(Date.parse(`${future}T12:00:00Z`) + 2 * 86_400_000);
    await Promise.all([pass(later), pass(later)]);
    expect((await overdueEntries(owner)).filter((e) => e.event!.subject === notYet.id).map((e) => e.event!.key)).toEqual([future]);
  });

  it('a due date moved later makes the invoice overdue again when the new date passes (a new occurrence); paying it first stops that', async () => {
    const owner = await configuredWorkspace(sg);
    const inv = (await out('invoices.post', { id: (await draft(sg, owner, { issue_date: '2026-10-05', due_date: '2026-11-04' })).id }, owner)).invoice;
    const other = (await out('invoices.post', { id: (await draft(sg, owner, { issue_date: '2026-10-05', due_date: '2026-11-04' })).id }, owner)).invoice;
    await pass();
    expect((await overdueEntries(owner)).map((e) => e.event!.key)).toEqual(['2026-11-04', '2026-11-04']);
    // A payment agreement moves both due dates to 2026-12-15 (the books' own change of an open invoice re-indexes it).
    for (const id of [inv.id, other.id]) await changeInvoice({ db: sg.db, workspace: owner.workspace, now: new Date() }, id, () => ({ set: { due_date: '2026-12-15' } }));
    await pass();
    expect(await overdueEntries(owner)).toHaveLength(2);
    // `other` is paid before the new date passes; `inv` is not.
    await out('payments.register', { customer_id: await andina(owner), amount: 35700000, currency: 'COP', date: '2026-11-20', invoices: [{ invoice_id: other.id }] }, owner);
    const after = new Date('2026-12-17T12:00:00Z');
    await Promise.all([pass(after), pass(after)]);
    const entries = await overdueEntries(owner);
    expect(entries.map((e) => [e.event!.subject, e.event!.key])).toEqual([
      [expect.any(String), '2026-11-04'], [expect.any(String), '2026-11-04'], [inv.id, '2026-12-15'],
    ]);
  });

  it('the capability records only the events of the module that owns them', async () => {
    const owner = await configuredWorkspace(sg);
    const assets = systemEventsFor(sg.governance.ledger, 'invoices', 'assets');
    await expect(assets.record({ workspace: owner.workspace, type: 'invoice.overdue', subject: 'inv_x', key: '2026-11-04', data: {} })).rejects.toThrow(/does not own/);
    const foreign = systemEventsFor(sg.governance.ledger, 'invoices', 'invoices');
    await expect(foreign.record({ workspace: owner.workspace, type: 'deal.won' as never, subject: 'x', key: 'y', data: {} })).rejects.toThrow(/does not own/);
    expect(await overdueEntries(owner)).toEqual([]);
  });
});
