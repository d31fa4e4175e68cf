import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ASSERTION_HEADER, createLogger, localDate, peerGraph, signAssertion, type Principal } from '@cuadra/shared';
import { startTestSubgraph, testPrincipal, testServiceKeys, testSigningKeys, type TestSubgraph } from '@cuadra/shared/testing';
import { createServer as createPayroll, name as payrollName } from '../../payroll/src/server.ts';
import { payrollRuns } from '../../payroll/src/modules/payroll/runs.ts';
import { payrollJournal, payrollJournalHeads, publish, recordPosting } from '../../payroll/src/modules/payroll/journal_feed.ts';
import { payrollPullMarks } from '../src/accounting/payroll_pull.ts';
import { createServer, name } from '../src/server.ts';
import { journalEntries } from '../src/books/journal.ts';
import { payrollPull, pullPayrollEntries } from '../src/accounting/payroll_pull.ts';

/**
 * Payroll postings reach the finance journal through the graph (issue 18; ARCHITECTURE.md,
 * "Payroll postings"): a real payroll subgraph and a real invoices subgraph over HTTP, the
 * invoices journal pulling payroll's `payroll_journal` source with the read-only service assertion,
 * in the background (never in a read): the module tests run the job's pass by hand, as its timer would.
 *
 * Hand calculation of one employee on the minimum wage for a whole month of 2026 (amounts in
 * centavos; rules of payroll's calc.ts: lines half up to the centavo, IBC up to the peso, each
 * subsystem declared to PILA up to the next 100 pesos — Decreto 1990 de 2016 — the employee's
 * share half up to the peso, the employer's the rest):
 *   salary 175_090_500 (SMMLV 2026) + transport allowance 24_909_500 = earnings 200_000_000
 *   IBC 175_090_500; health 4 % = 7_003_620 → 7_003_600; pension 4 % → 7_003_600
 *   net = 200_000_000 − 14_007_200 = 185_992_800
 *   PILA (ET 114-1: the employer's health, ICBF, SENA rates are 0): health 4 % = 7_003_620 → 7_010_000
 *     (employer 6_400); pension 16 % = 28_014_480 → 28_020_000 (employer 28_020_000 − 7_003_600 = 21_016_400);
 *     ARL class I 0.522 % = 913_972.41 → 920_000; family fund 4 % → 7_010_000;
 *     employer = 6_400 + 21_016_400 + 920_000 + 7_010_000 = 28_952_800
 *   provisions on 200_000_000: severance /12 = 16_666_666.67 → 16_666_667; its interest 12 % of
 *     16_666_666.67 = 2_000_000.00 → 2_000_000; service bonus 16_666_667;
 *     vacations 175_090_500 × 15/360 = 7_295_437.5 → 7_295_438 → 42_628_772
 *   Σ debits = 200_000_000 + 28_952_800 + 42_628_772 = 271_581_572 = Σ credits.
 */
const MONTH_DEBITS = 271_581_572;
const MONTH_ACCOUNTS: Record<string, [number, number]> = {
  510506: [175_090_500, 0], 510527: [24_909_500, 0],
  510530: [16_666_667, 0], 510533: [2_000_000, 0], 510536: [16_666_667, 0], 510539: [7_295_438, 0],
  510568: [920_000, 0], 510569: [6_400, 0], 510570: [21_016_400, 0], 510572: [7_010_000, 0],
  // Each administrator's payable is what PILA declares for it.
  237005: [0, 7_010_000], 237006: [0, 920_000], 237010: [0, 7_010_000],
  238030: [0, 28_020_000], 250505: [0, 185_992_800],
  261005: [0, 16_666_667], 261010: [0, 2_000_000], 261015: [0, 7_295_438], 261020: [0, 16_666_667],
};
// The credits above: 7_010_000 + 920_000 + 7_010_000 + 28_020_000 + 185_992_800 + 16_666_667 + 2_000_000 + 7_295_438 + 16_666_667 = 271_581_572.

let payroll: TestSubgraph;
let invoices: TestSubgraph;
beforeAll(async () => {
  // Each knows the other: finance reads payroll's feed, payroll hints finance after it publishes.
  const finance = { url: '' };
  payroll = await startTestSubgraph(payrollName, createPayroll, { peers: { invoices: finance } });
  invoices = await startTestSubgraph(name, createServer, { peers: { payroll } });
  finance.url = invoices.url;
});
afterAll(async () => {
  await invoices?.close();
  await payroll?.close();
});

const owner = testPrincipal();
const runs: Record<string, string> = {};

/** Payroll posted in the workspace (the hint), then one pass of finance's background payroll pull, as its timer runs it. */
async function pulledInBackground(p: Principal): Promise<void> {
  payrollPull.wake(p.workspace);
  await payrollPull.pass(invoices.db, { ...testServiceKeys(), urls: { payroll: payroll.url } }, createLogger('invoices', 'silent'), new Date());
}

async function postedMonth(month: string, options: { post?: boolean } = {}): Promise<string> {
  const r = await payroll.call('payroll.run', { month }, owner);
  expect(r.ok, JSON.stringify(r)).toBe(true);
  const id = r.output.run.id as string;
  expect(r.output.run.journal_entry.total_debit).toBe(MONTH_DEBITS);
  expect((await payroll.call('payroll.approve', { id, amount: 185_992_800 }, owner)).ok).toBe(true);
  if (options.post !== false) expect((await payroll.call('payroll.post', { id }, owner)).output.run.status).toBe('posted');
  runs[month] = id;
  return id;
}

type Row = { account: string; debit: number; credit: number; balance: number };
async function trialBalance(sg: Pick<TestSubgraph, 'graphql'>, p: Principal, asOf: string) {
  const r = await sg.graphql('query($q: JSON!) { invoicesMetric(query: $q) }', { q: { metric: 'trial_balance', as_of: asOf } }, p);
  expect(r.body.errors, JSON.stringify(r.body.errors)).toBeUndefined();
  const m = r.body.data.invoicesMetric as { summary: { value: number }; rows: Row[] };
  return { total: m.summary.value, by: Object.fromEntries(m.rows.map((x) => [x.account, [x.debit, x.credit]])) as Record<string, [number, number]> };
}
async function payrollEntries(p: Principal) {
  const r = await invoices.graphql('query($q: JSON!) { invoicesRecords(query: $q) }', { q: { source: 'journal_entries', limit: 100 } }, p);
  expect(r.body.errors, JSON.stringify(r.body.errors)).toBeUndefined();
  return (r.body.data.invoicesRecords.rows as { id: string; date: string; source: { kind: string; id: string }; total_debit: number; total_credit: number }[])
    .filter((e) => e.source.kind.startsWith('payroll'));
}
async function feed(p: Principal) {
  const r = await payroll.graphql('query($q: JSON!) { payrollRecords(query: $q) }', { q: { source: 'payroll_journal' } }, p);
  return r.body.data.payrollRecords.rows as { id: string; kind: string; date: string; total_debit: number }[];
}
const scaled = (k: number) => Object.fromEntries(Object.entries(MONTH_ACCOUNTS).map(([a, [d, c]]) => [a, [d * k, c * k]]));

describe('payroll postings in the finance journal', () => {
  beforeAll(async () => {
    const e = await payroll.call('employees.create', {
      name: 'Ana Mínimo', document: { type: 'CC', number: '1023456789' }, position: 'Auxiliar', hire_date: '2026-01-01',
      salary: { amount: 175_090_500, currency: 'COP' }, contract_type: 'indefinite', arl_class: 1,
    }, owner);
    expect(e.ok, JSON.stringify(e)).toBe(true);
  });

  it('takes in a post of a workspace finance never saw, with no read of it: payroll hints finance, whose next pass pulls it', async () => {
    const fresh = testPrincipal();
    await payroll.output('employees.create', {
      name: 'Beto Nuevo', document: { type: 'CC', number: '1023456790' }, position: 'Auxiliar', hire_date: '2026-01-01',
      salary: { amount: 175_090_500, currency: 'COP' }, contract_type: 'indefinite', arl_class: 1,
    }, fresh);
    const id = (await payroll.output('payroll.run', { month: '2026-02' }, fresh)).run.id as string;
    await payroll.output('payroll.approve', { id, amount: 185_992_800 }, fresh);
    await payroll.output('payroll.post', { id }, fresh);
    // Only finance's background passes run (as its timer runs them), no read and no wake by hand:
    // the workspace holds no mark yet, so without payroll's hint no pass would ever pull it.
    const peers = { ...testServiceKeys(), urls: { payroll: payroll.url } };
    const held = () => journalEntries(invoices.db).exists({ _id: `je_${id}`, workspace: fresh.workspace });
    for (let pass = 0; pass < 40 && !(await held()); pass++) {
      await payrollPull.pass(invoices.db, peers, createLogger('invoices', 'silent'), new Date());
      if (!(await held())) await new Promise((r) => setTimeout(r, 25));
    }
    const entry = await journalEntries(invoices.db).findById(`je_${id}`).lean();
    expect(entry).toMatchObject({ workspace: fresh.workspace, date: '2026-02-28', source: { kind: 'payroll', id } });
    expect(entry!.lines.reduce((s, l) => s + l.debit, 0)).toBe(MONTH_DEBITS);
    // The hint is a service's alone: a person's (or an agent's) assertion is refused, and the field is not in the public graph.
    const asked = await invoices.graphql('query { payrollJournalGrew }', {}, fresh);
    expect(asked.body.errors?.[0]?.extensions?.code).toBe('policy_denied');
  });

  it('takes in nothing before a run is posted, even when posting died between its two writes', async () => {
    const id = await postedMonth('2026-03', { post: false });
    // The state a crash of payroll.post leaves between writing the feed document and moving the run: invisible.
    const run = await payrollRuns(payroll.db).findById(id).lean();
    await recordPosting(payroll.db, run!, new Date());
    expect(await feed(owner)).toEqual([]);
    expect(await payrollEntries(owner)).toEqual([]);
    expect((await trialBalance(invoices, owner, '2026-03-31')).total).toBe(0);
    // The retried post completes it.
    expect((await payroll.call('payroll.post', { id }, owner)).output.run.status).toBe('posted');
    expect(await feed(owner)).toMatchObject([{ id: `je_${id}`, kind: 'posting', date: '2026-03-31', total_debit: MONTH_DEBITS }]);
  });

  it('writes a posted run once, balanced on the hand-worked accounts, across a crashed pull, a restart and concurrent reads', async () => {
    await postedMonth('2026-04');
    // A pull killed after writing its first (oldest) entry: what it wrote is what a pull that saw only March writes.
    const real = peerGraph('invoices', { ...testServiceKeys(), urls: { payroll: payroll.url } }, owner.workspace);
    const crashed = await pullPayrollEntries(invoices.db, owner.workspace, async (sg, q, v) => {
      const data = await real(sg, q, v);
      return { payrollRecords: { rows: data.payrollRecords.rows.slice(0, 1) } };
    }, new Date());
    expect(crashed.written).toEqual([`je_${runs['2026-03']}`]);

    // The service restarts on the same database; its background pull, five passes at once, takes in the rest.
    const restarted = await createServer({
      db: invoices.db, log: createLogger('invoices', 'silent'), assertionPublicKey: testSigningKeys().publicKey, governance: invoices.governance,
      runApprovals: false, peers: { ...testServiceKeys(), urls: { payroll: payroll.url } },
    });
    const { url, close } = await restarted.listen(0);
    const again = {
      async graphql(query: string, variables: Record<string, unknown>, p: Principal) {
        const res = await fetch(`${url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', [ASSERTION_HEADER]: signAssertion(p, testSigningKeys().privateKey) }, body: JSON.stringify({ query, variables }) });
        return { status: res.status, body: (await res.json()) as any };
      },
    };
    try {
      payrollPull.wake(owner.workspace);
      await Promise.all([1, 2, 3, 4, 5].map(() => payrollPull.pass(invoices.db, { ...testServiceKeys(), urls: { payroll: payroll.url } }, createLogger('invoices', 'silent'), new Date())));
      const reads = await Promise.all([1, 2, 3, 4, 5].map(() => trialBalance(again, owner, '2026-04-30')));
      for (const tb of reads.slice(1)) expect(tb.total).toBe(reads[0].total);
    } finally {
      await close();
      await restarted.stop();
    }

    const entries = await payrollEntries(owner);
    expect(entries.map((e) => e.id).sort()).toEqual([`je_${runs['2026-03']}`, `je_${runs['2026-04']}`].sort());
    for (const e of entries) expect(e).toMatchObject({ total_debit: MONTH_DEBITS, total_credit: MONTH_DEBITS });
    expect(entries.find((e) => e.id === `je_${runs['2026-03']}`)).toMatchObject({ date: '2026-03-31', source: { kind: 'payroll', id: runs['2026-03'] } });
    // Written once each: the journal holds exactly these, and the ledger rollups count each once.
    expect(await journalEntries(invoices.db).countDocuments({ workspace: owner.workspace })).toBe(2);
    const march = await trialBalance(invoices, owner, '2026-03-31');
    expect(march.total).toBe(MONTH_DEBITS);
    expect(march.by).toEqual(MONTH_ACCOUNTS);
    const april = await trialBalance(invoices, owner, '2026-04-30');
    // April pays the same (30 days, the same salary and parameters): each account twice March's.
    expect(april.total).toBe(2 * MONTH_DEBITS);
    expect(april.by).toEqual(scaled(2));
    // Another workspace sees none of it.
    const other = testPrincipal();
    expect(await payrollEntries(other)).toEqual([]);
    expect(await feed(other)).toEqual([]);
  });

  it('names every payroll account in the trial balance and the balance sheet by its PUC name, never by its bare code', async () => {
    // The PUC's names (Decreto 2650 de 1993, catálogo de cuentas) of the codes a run posts to; ARP is ARL since Ley 1562 de 2012.
    const PUC_NAMES: Record<string, string> = {
      510506: 'Sueldos', 510527: 'Auxilio de transporte', 510530: 'Cesantías', 510533: 'Intereses sobre cesantías', 510536: 'Prima de servicios',
      510539: 'Vacaciones', 510568: 'Aportes a administradoras de riesgos laborales, ARL', 510570: 'Aportes a fondos de pensiones y/o cesantías',
      510569: 'Aportes a entidades promotoras de salud, EPS', 510572: 'Aportes cajas de compensación familiar', 237005: 'Aportes a entidades promotoras de salud, EPS',
      237006: 'Aportes a administradoras de riesgos laborales, ARL', 237010: 'Aportes parafiscales', 238030: 'Fondos de cesantías y/o pensiones',
      250505: 'Salarios por pagar', 261005: 'Cesantías', 261010: 'Intereses sobre cesantías', 261015: 'Vacaciones', 261020: 'Prima de servicios',
    };
    const r = await invoices.graphql('query($q: JSON!) { invoicesMetric(query: $q) }', { q: { metric: 'trial_balance', as_of: '2026-04-30' } }, owner);
    const rows = r.body.data.invoicesMetric.rows as { account: string; name: string }[];
    expect(rows.map((x) => x.account).sort()).toEqual(Object.keys(MONTH_ACCOUNTS).sort());
    expect(Object.fromEntries(rows.map((x) => [x.account, x.name]))).toEqual(PUC_NAMES);
    const bs = await invoices.graphql('query($q: JSON!) { invoicesMetric(query: $q) }', { q: { metric: 'balance_sheet', as_of: '2026-04-30' } }, owner);
    const accounts = (bs.body.data.invoicesMetric.rows as { kind: string; account: string | null; name: string }[]).filter((x) => x.kind === 'account');
    expect(accounts.length).toBe(9);
    for (const a of accounts) expect([a.account, a.name]).toEqual([a.account, PUC_NAMES[a.account!]]);
    // The chart answers them too, as PUC accounts.
    expect((await invoices.call('accounts.get', { code: '510506' }, owner)).output.account).toMatchObject({ name: 'Sueldos', default: true, parent: '5105' });
  });

  it('opens in the workspace\'s chart, with the name payroll gave, an account payroll posts to that the PUC lacks', async () => {
    const p = testPrincipal();
    const e = await payroll.call('employees.create', {
      name: 'Beto Planta', document: { type: 'CC', number: '1023456790' }, position: 'Auxiliar', hire_date: '2026-01-01',
      salary: { amount: 175_090_500, currency: 'COP' }, contract_type: 'indefinite', arl_class: 1,
    }, p);
    expect(e.ok, JSON.stringify(e)).toBe(true);
    const run = (await payroll.call('payroll.run', { month: '2026-02' }, p)).output.run;
    expect((await payroll.call('payroll.approve', { id: run.id, amount: 185_992_800 }, p)).ok).toBe(true);
    expect((await payroll.call('payroll.post', { id: run.id }, p)).ok).toBe(true);
    // Payroll's feed as it would read if payroll booked salaries to an auxiliary of its own (51050601).
    const real = peerGraph('invoices', { ...testServiceKeys(), urls: { payroll: payroll.url } }, p.workspace);
    await pullPayrollEntries(invoices.db, p.workspace, async (sg, q, v) => {
      const data = await real(sg, q, v);
      const rows = (data.payrollRecords.rows as { lines: { account: string; name: string }[] }[]).map((row) => ({
        ...row, lines: row.lines.map((l) => (l.account === '510506' ? { ...l, account: '51050601', name: 'Sueldos personal de planta' } : l)),
      }));
      return { payrollRecords: { ...data.payrollRecords, rows } };
    }, new Date());
    const tb = await invoices.graphql('query($q: JSON!) { invoicesMetric(query: $q) }', { q: { metric: 'trial_balance', as_of: '2026-02-28' } }, p);
    expect((tb.body.data.invoicesMetric.rows as { account: string; name: string; debit: number }[]).find((x) => x.account === '51050601')).toMatchObject({ name: 'Sueldos personal de planta', debit: 175_090_500 });
    expect((await invoices.call('accounts.get', { code: '51050601' }, p)).output.account).toMatchObject({ name: 'Sueldos personal de planta', default: false, parent: '510506', level: 'auxiliary' });
    // Only in that workspace.
    expect(await invoices.call('accounts.get', { code: '51050601' }, owner)).toMatchObject({ ok: false, code: 'not_found' });
  });

  it('leaves an entry dated in a closed month out until the month is reopened; closing a month takes in what was posted first', async () => {
    // May is closed in finance before payroll posts into it.
    expect((await invoices.call('periods.close', { month: '2026-05' }, owner)).output.period.status).toBe('closed');
    await postedMonth('2026-05');
    await pulledInBackground(owner);
    expect((await trialBalance(invoices, owner, '2026-05-31')).total).toBe(2 * MONTH_DEBITS);
    expect((await payrollEntries(owner)).map((e) => e.id)).not.toContain(`je_${runs['2026-05']}`);
    // Reopening May writes it.
    expect((await invoices.call('periods.reopen', { month: '2026-05' }, owner)).output.period.status).toBe('open');
    expect(await journalEntries(invoices.db).exists({ _id: `je_${runs['2026-05']}` })).not.toBeNull();
    // June is posted, then closed in finance with no read between: the close takes it in first.
    await postedMonth('2026-06');
    await pulledInBackground(owner);
    expect((await invoices.call('periods.close', { month: '2026-06' }, owner)).output.period.status).toBe('closed');
    expect(await journalEntries(invoices.db).exists({ _id: `je_${runs['2026-06']}` })).not.toBeNull();
    const june = await trialBalance(invoices, owner, '2026-06-30');
    expect(june.total).toBe(4 * MONTH_DEBITS);
    expect(june.by).toEqual(scaled(4));
  });

  it('voids a posted run with a reversing entry the journal takes in once', async () => {
    const id = runs['2026-03'];
    const voided = await payroll.call('payroll.void', { id, reason: 'Liquidada con el salario equivocado' }, owner);
    expect(voided.output.run).toMatchObject({ status: 'void', void_reason: 'Liquidada con el salario equivocado' });
    expect(await payroll.call('payroll.void', { id }, owner)).toMatchObject({ code: 'conflict' });
    const today = localDate(new Date());
    expect((await feed(owner))[0]).toMatchObject({ id: `je_${id}_void`, kind: 'reversal', date: today, total_debit: MONTH_DEBITS });
    await Promise.all([pulledInBackground(owner), pulledInBackground(owner)]);
    const entries = await payrollEntries(owner);
    expect(entries.filter((e) => e.id === `je_${id}_void`)).toMatchObject([{ date: today, source: { kind: 'payroll_reversal', id }, total_debit: MONTH_DEBITS }]);
    expect(entries).toHaveLength(5);
    // Today: March posted and reversed, April, May and June posted: per account three months'
    // balance; the debit column holds March's credits too (the reversal's debits), so Σ debits = 5 × a month.
    const now = await trialBalance(invoices, owner, today);
    expect(now.total).toBe(5 * MONTH_DEBITS);
    for (const [account, [d, c]] of Object.entries(MONTH_ACCOUNTS)) expect(now.by[account][0] - now.by[account][1]).toBe(3 * (d - c));
    // The period is free again: March can be run anew.
    expect((await payroll.call('payroll.run', { month: '2026-03' }, owner)).ok).toBe(true);
  });

  it('reads only what is new, and never skips an entry made final after the mark moved, one a crash left without its place, or one waiting for a closed month', async () => {
    const real = peerGraph('invoices', { ...testServiceKeys(), urls: { payroll: payroll.url } }, owner.workspace);
    const read = { calls: 0, items: [] as string[] };
    const counting: typeof real = async (sg, q, v) => {
      const data = await real(sg, q, v);
      read.calls += 1;
      read.items.push(...(data.payrollRecords.rows as { id: string }[]).map((r) => r.id));
      return data;
    };
    const pull = async () => {
      read.calls = 0;
      read.items = [];
      return pullPayrollEntries(invoices.db, owner.workspace, counting, new Date());
    };
    await pull();
    // Nothing new: one read, no feed item.
    expect(await pull()).toMatchObject({ written: [], blocked: [], reachable: true });
    expect(read).toEqual({ calls: 1, items: [] });

    // October is closed in finance before payroll posts into it: the entry waits, kept by the mark.
    expect((await invoices.call('periods.close', { month: '2026-10' }, owner)).output.period.status).toBe('closed');
    await postedMonth('2026-10');
    expect(await pull()).toMatchObject({ written: [], blocked: [{ id: `je_${runs['2026-10']}` }] });
    expect(read.items).toEqual([`je_${runs['2026-10']}`]);

    // July's entry is written (its place in the feed taken) before August is posted, but July is posted after.
    const july = await postedMonth('2026-07', { post: false });
    await recordPosting(payroll.db, (await payrollRuns(payroll.db).findById(july).lean())!, new Date());
    await postedMonth('2026-08');
    expect((await pull()).written).toEqual([`je_${runs['2026-08']}`]);
    expect(read.items).toEqual([`je_${runs['2026-08']}`]);
    expect((await payroll.call('payroll.post', { id: july }, owner)).output.run.status).toBe('posted');
    expect((await pull()).written).toEqual([`je_${july}`]);
    expect(read.items).toEqual([`je_${july}`]);

    // September's post dies after its run moved, before the entry got its place: still taken in, once.
    const september = await postedMonth('2026-09', { post: false });
    await recordPosting(payroll.db, (await payrollRuns(payroll.db).findById(september).lean())!, new Date());
    await payrollRuns(payroll.db).updateOne({ _id: september }, { $set: { status: 'posted', posted_at: new Date() } });
    expect((await pull()).written).toEqual([`je_${september}`]);
    expect((await pull()).written).toEqual([]);
    expect(await journalEntries(invoices.db).countDocuments({ _id: `je_${september}` })).toBe(1);
    // February's publisher dies between giving the entry its place and moving the head: still taken in.
    const february = await postedMonth('2026-02', { post: false });
    await recordPosting(payroll.db, (await payrollRuns(payroll.db).findById(february).lean())!, new Date());
    await payrollRuns(payroll.db).updateOne({ _id: february }, { $set: { status: 'posted', posted_at: new Date() } });
    const head = (await payrollJournalHeads(payroll.db).findOne({ _id: owner.workspace }))!.head;
    await payrollJournal(payroll.db).updateOne({ _id: `je_${february}` }, { $set: { seq: head + 1, seq_key: `${owner.workspace}|${head + 1}` } });
    expect((await pull()).written).toEqual([`je_${february}`]);

    // The mark moved past October's entry; reopening October takes it in from the mark, not from payroll's feed again.
    expect((await payrollPullMarks(invoices.db).findOne({ _id: owner.workspace }))?.waiting.map((r) => r.id)).toEqual([`je_${runs['2026-10']}`]);
    expect(await journalEntries(invoices.db).exists({ _id: `je_${runs['2026-10']}` })).toBeNull();
    expect((await invoices.call('periods.reopen', { month: '2026-10' }, owner)).output.period.status).toBe('open');
    expect(await journalEntries(invoices.db).exists({ _id: `je_${runs['2026-10']}` })).not.toBeNull();
    expect((await payrollPullMarks(invoices.db).findOne({ _id: owner.workspace }))?.waiting).toEqual([]);
    // As of October: February, March (its reversal is dated today, in November) and April to October, each once.
    const october = await trialBalance(invoices, owner, '2026-10-31');
    for (const [account, [d, c]] of Object.entries(MONTH_ACCOUNTS)) expect(october.by[account][0] - october.by[account][1]).toBe(9 * (d - c));
  });

  it('gives entries made final at once each their own place, with no hole', async () => {
    const workspace = `ws_seq_${Date.now()}`;
    const ids = Array.from({ length: 12 }, (_, i) => `je_prun_seq${i}`);
    for (const id of ids) {
      await payrollJournal(payroll.db).create({ _id: id, workspace, run_id: id.slice(3), kind: 'posting', date: '2026-01-31', currency: 'COP', memo: 'x', lines: [], created_at: new Date() });
      await payrollJournalHeads(payroll.db).updateOne({ _id: workspace }, { $addToSet: { pending: id }, $setOnInsert: { head: 0 } }, { upsert: true });
    }
    await Promise.all(ids.map((id) => publish(payroll.db, workspace, id)));
    await Promise.all(ids.slice(0, 3).map((id) => publish(payroll.db, workspace, id))); // a retry keeps its place
    const seqs = (await payrollJournal(payroll.db).find({ workspace }).lean()).map((d) => d.seq).sort((a, b) => a! - b!);
    expect(seqs).toEqual(ids.map((_, i) => i + 1));
    expect(await payrollJournalHeads(payroll.db).findOne({ _id: workspace })).toMatchObject({ head: 12, pending: [] });
  });

  it('takes in a run with a final settlement: the provisions the books held for it released to zero, what is owed by concept, by hand', async () => {
    // Issue 30 item 9. A minimum-wage contract from 2026-07-01, dismissed without just cause on 2026-09-15.
    const ws = testPrincipal();
    const hired = await payroll.call('employees.create', {
      name: 'Bea Corto', document: { type: 'CC', number: '1023456790' }, position: 'Auxiliar', hire_date: '2026-07-01',
      salary: { amount: 175_090_500, currency: 'COP' }, contract_type: 'indefinite', arl_class: 1,
    }, ws);
    const run = async (month: string) => {
      const r = await payroll.call('payroll.run', { month }, ws);
      expect(r.ok, JSON.stringify(r)).toBe(true);
      expect((await payroll.call('payroll.approve', { id: r.output.run.id, amount: r.output.run.totals.net }, ws)).ok).toBe(true);
      expect((await payroll.call('payroll.post', { id: r.output.run.id }, ws)).ok).toBe(true);
      await pulledInBackground(ws);
      return r.output.run as { journal_entry: { total_debit: number } };
    };
    const july = await run('2026-07');
    const august = await run('2026-08');
    expect((await payroll.call('employees.terminate', { id: hired.output.employee.id, date: '2026-09-15', reason: 'without_just_cause' }, ws)).ok).toBe(true);
    const september = await run('2026-09');
    // Settlement, 75 days (1 Jul – 15 Sep), base 175_090_500 + transport 24_909_500 = 200_000_000:
    //   severance 200_000_000 × 75/360 = 41_666_666.67 → 41_666_667; interest 41_666_666.67 × 12 % × 75/360 = 1_041_666.67 → 1_041_667;
    //   service bonus (semester from 1 Jul) 41_666_667; vacations 175_090_500 × 75/720 = 18_238_593.75 → 18_238_594;
    //   indemnity: 75 days ≤ a year, 30 days of salary = 175_090_500.
    // Provisions booked: July and August 16_666_667 + 2_000_000 + 16_666_667 + 7_295_438 each; 1–15 Sep on 100_000_000:
    //   8_333_333 + 1_000_000 + 8_333_333 + 3_647_719. Severance 41_666_667, interest 5_000_000, bonus 41_666_667, vacations 18_238_595.
    // All of them are in the settlement's windows, so the release empties each provision account, and each expense
    // account ends at what is owed: interest 5_000_000 − (5_000_000 − 1_041_667) = 1_041_667; vacations 18_238_595 − 1 = 18_238_594.
    const tb = await trialBalance(invoices, ws, '2026-09-30');
    expect(tb.total).toBe(july.journal_entry.total_debit + august.journal_entry.total_debit + september.journal_entry.total_debit);
    const net = (a: string) => (tb.by[a] ? tb.by[a][0] - tb.by[a][1] : 0);
    for (const provision of ['261005', '261010', '261015', '261020']) expect(net(provision)).toBe(0);
    expect([net('510530'), net('510533'), net('510536'), net('510539'), net('510560')]).toEqual([41_666_667, 1_041_667, 41_666_667, 18_238_594, 175_090_500]);
    expect([net('251010'), net('251505'), net('252005'), net('252505'), net('254005')]).toEqual([-41_666_667, -1_041_667, -41_666_667, -18_238_594, -175_090_500]);
  });
});
