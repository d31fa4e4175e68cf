import mongoose from 'mongoose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSystem, type ServiceEndpoint, type TestSystem } from '../helpers/system.ts';

// Issue 33, "Out of one machine": two replicas of every subgraph (each pair on its subgraph's one
// database) and two gateways, each given both replicas' URLs (SUBGRAPH_<NAME>_URL as a list, taken
// in turn). A mixed burst goes through both gateways at once; what was done is then counted in the
// databases against what the callers were answered. Run with `npm run test:replicas` (not in
// `npm test`: 16 services).

// Per key: enough for each lane of the burst; the shared-quota check uses a key of its own.
const PER_KEY = 40;
let sys: TestSystem;
let gw2: ServiceEndpoint;
let mongo: mongoose.mongo.MongoClient;
let prefix: string;
let workspace: string;
let owner: string;
let admin: string;

type Answer = { status: number; headers: Headers; body: any };
const gateways = (): string[] => [sys.gatewayUrl, gw2.url];

/** Calls a tool through gateway `g` (0 or 1). */
async function via(g: number, tool: string, input: unknown, key: string, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await fetch(`${gateways()[g]}/v1/tools/${tool}:invoke`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers }, body: JSON.stringify(input) });
  const text = await res.text();
  let body: unknown = text;
  try { body = JSON.parse(text); } catch { /* not JSON */ }
  return { status: res.status, headers: res.headers, body };
}

async function ok(g: number, tool: string, input: unknown, key = owner): Promise<any> {
  const r = await via(g, tool, input, key);
  if (r.status !== 200) throw new Error(`${tool} via gateway ${g + 1} → ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.output;
}

const db = (service: string) => mongo.db(`${prefix}_${service}`);
/** Ledger entries of this workspace's calls of `tool` that ran (outcome ok, not a replay: a replay is ledgered too, marked). */
const ledgerOf = (tool: string, extra: Record<string, unknown> = {}) => db('governance').collection('ledger').countDocuments({ workspace, tool, outcome: 'ok', replayed: { $ne: true }, ...extra });

async function until<T>(read: () => Promise<T>, done: (v: T) => boolean, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (done(v) || Date.now() > deadline) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
}

beforeAll(async () => {
  sys = await startTestSystem('replicas', { RATE_LIMIT_PER_CREDENTIAL: `${PER_KEY}/60`, RATE_LIMIT_PER_WORKSPACE: '100000/60' }, { replicas: 2 });
  gw2 = await sys.startAnotherGateway();
  prefix = sys.gatewayDb.replace(/_gateway$/, '');
  mongo = await mongoose.mongo.MongoClient.connect(process.env.MONGO_URL!);
  const ws = await sys.workspace('Réplicas SAS');
  workspace = ws.workspace_id;
  owner = ws.api_key;
  admin = (await sys.person(workspace, 'admin', 'Aprobadora')).api_key;
  await ok(0, 'einvoicing.configure', {
    issuer: { nit: '900373115-3', name: 'Réplicas SAS' }, technical_key: 'fc8eac422eba16e22ffd8c6f94b3f40a6e38162c', software_pin: '75315',
    numbering: { invoice: { prefix: 'SETP', from: 990000001, to: 995000000, resolution: '18760000001' }, credit_note: { prefix: 'NC', from: 1, to: 5000 } },
  });
}, 300_000);

afterAll(async () => {
  await mongo?.close();
  await sys?.stop();
});

describe('two replicas of every subgraph behind two gateways', () => {
  it('both gateways are up on both replicas of every subgraph', async () => {
    // A gateway answers 503 until it has reached every subgraph (the second has just started).
    const health = await until(() => Promise.all(gateways().map((g) => fetch(`${g}/healthz`).then((r) => r.status))), (h) => h.every((x) => x === 200), 30_000);
    expect(health).toEqual([200, 200]);
  });

  it('a mixed burst through both gateways: nothing done twice, keyed retries through the other gateway replay', async () => {
    const customer = (await ok(1, 'parties.create', { name: 'Tienda Andina SAS', kind: 'customer' })).party.id;
    // Four keys (lanes), so no key comes near its quota.
    const lanes = [owner, ...(await Promise.all([1, 2, 3].map(async () => (await sys.key(workspace, 'admin')).api_key)))];

    // Unkeyed: 16 invoices created and posted, half through each gateway, four lanes at once.
    const INVOICES = 16;
    const invoiceCalls = await Promise.all(Array.from({ length: INVOICES }, async (_, i) => {
      const key = lanes[i % lanes.length];
      const created = await via(i % 2, 'invoices.create', { customer_id: customer, currency: 'COP', issue_date: '2026-11-20', lines: [{ description: `Servicio ${i}`, quantity: 1, unit_price: 10000000 + i }] }, key);
      if (created.status !== 200) return { created: created.status, posted: 0 };
      const posted = await via((i + 1) % 2, 'invoices.post', { id: created.body.output.invoice.id }, key);
      return { created: 200, posted: posted.status, number: posted.body.output?.invoice.number as string | undefined };
    }));
    expect(invoiceCalls.map((c) => [c.created, c.posted])).toEqual(Array.from({ length: INVOICES }, () => [200, 200]));
    // Counted in the database: one invoice per create answered 200, each posted once, numbers unique and gapless.
    const invoices = await db('invoices').collection('invoices').find({ workspace, customer_id: customer }).toArray();
    expect(invoices).toHaveLength(INVOICES);
    expect(invoices.every((d) => d.status === 'posted')).toBe(true);
    const numbers = invoices.map((d) => Number(String(d.number).replace('SETP', ''))).sort((a, b) => a - b);
    expect(numbers).toEqual(Array.from({ length: INVOICES }, (_, i) => 990000001 + i));
    expect(await ledgerOf('invoices.create')).toBe(INVOICES);
    expect(await ledgerOf('invoices.post')).toBe(INVOICES);

    // Keyed: 8 payments, each sent through one gateway and retried with its key through the other,
    // half of them both at once.
    const PAYMENTS = 8;
    const ids = invoices.map((d) => String(d._id));
    const payments = await Promise.all(Array.from({ length: PAYMENTS }, async (_, i) => {
      const input = { customer_id: customer, amount: 1000000, currency: 'COP', date: '2026-11-25', invoices: [{ invoice_id: ids[i] }] };
      const headers = { 'idempotency-key': `pay-${i}` };
      if (i % 2 === 0) {
        const first = await via(0, 'payments.register', input, lanes[i % lanes.length], headers);
        const retry = await via(1, 'payments.register', input, lanes[i % lanes.length], headers);
        return [first, retry];
      }
      return Promise.all([via(0, 'payments.register', input, lanes[i % lanes.length], headers), via(1, 'payments.register', input, lanes[i % lanes.length], headers)]);
    }));
    for (const [i, [a, b]] of payments.entries()) {
      if (i % 2 === 0) {
        expect([a.status, b.status]).toEqual([200, 200]);
        expect(b.headers.get('idempotent-replayed')).toBe('true');
        expect(b.body).toEqual(a.body);
      } else {
        // Both at once: one runs, the other replays it or is told it is still running (409), never a second run.
        expect([a.status, b.status]).toContain(200);
        for (const r of [a, b]) expect(r.status === 200 || (r.status === 409 && r.body.code === 'idempotency_conflict'), JSON.stringify(r.body)).toBe(true);
      }
    }
    expect(await db('invoices').collection('payments').countDocuments({ workspace })).toBe(PAYMENTS);
    expect(await ledgerOf('payments.register')).toBe(PAYMENTS);
    // Every replay answered 200 is in the ledger as a replay: 200s answered = runs + replays.
    const answered200 = payments.flat().filter((r) => r.status === 200).length;
    expect(await db('governance').collection('ledger').countDocuments({ workspace, tool: 'payments.register', outcome: 'ok' })).toBe(answered200);
  });

  it('a held call decided through the other gateway runs once, though both gateways decide at once and two replicas sweep', async () => {
    const policy = (await ok(0, 'policies.create', { name: 'Hold projects', priority: 10, match: { tools: ['projects.create'] }, effect: 'hold' })).policy.id;
    const HELD = 6;
    const held = await Promise.all(Array.from({ length: HELD }, (_, i) => via(i % 2, 'projects.create', { name: `Retenido ${i}`, key: `HLD${i}` }, owner)));
    expect(held.map((h) => h.status)).toEqual(Array.from({ length: HELD }, () => 202));
    const second = (await sys.person(workspace, 'admin', 'Segunda')).api_key;
    // Each approval decided by two people at once, one through each gateway: exactly one decision counts.
    const decisions = await Promise.all(held.map(async (h) => {
      const [a, b] = await Promise.all([via(1, 'approvals.decide', { id: h.body.approval_id, decision: 'approve' }, admin), via(0, 'approvals.decide', { id: h.body.approval_id, decision: 'approve' }, second)]);
      return [a.status, b.status].sort();
    }));
    expect(decisions).toEqual(Array.from({ length: HELD }, () => [200, 409]));
    // Read in the database, not through a gateway: polling would spend the keys' quota.
    for (const h of held) {
      const done = await until(() => db('governance').collection('approvals').findOne({ _id: h.body.approval_id as unknown as mongoose.mongo.ObjectId }), (a) => a?.status === 'executed');
      expect(done?.status).toBe('executed');
    }
    // Each held call ran once: one project per approval, one ledger entry of its run.
    expect(await db('projects').collection('projects').countDocuments({ workspace, key: { $regex: '^HLD' } })).toBe(HELD);
    // One run of each held call in the ledger (its approval's), besides the entry of its hold.
    expect(await ledgerOf('projects.create')).toBe(HELD);
    await ok(1, 'policies.delete', { id: policy });
  });

  it('a recurring schedule run through both gateways at once issues each due period once', async () => {
    const customer = (await ok(0, 'parties.create', { name: 'Cliente Mensual SAS', kind: 'customer' })).party.id;
    const schedule = (await ok(1, 'invoices.recurring_create', { customer_id: customer, currency: 'COP', interval: 'month', start_date: '2026-06-01', post: true, lines: [{ description: 'Soporte mensual', quantity: 1, unit_price: 50000000 }] })).recurring;
    // 2026-06-01 … 2026-11-01: six periods due by 2026-11-27; four runs at once, two through each gateway.
    const runs = await Promise.all([0, 1, 0, 1].map((g) => via(g, 'invoices.recurring_run', { as_of: '2026-11-27' }, owner)));
    for (const r of runs) expect([200, 409], JSON.stringify(r.body)).toContain(r.status);
    const issued = runs.filter((r) => r.status === 200).flatMap((r) => r.body.output.issued.map((i: any) => i.date)).sort();
    expect(issued).toEqual(['2026-06-01', '2026-07-01', '2026-08-01', '2026-09-01', '2026-10-01', '2026-11-01']);
    const made = await db('invoices').collection('invoices').find({ workspace, customer_id: customer }).toArray();
    expect(made.map((d) => d.issue_date).sort()).toEqual(issued);
    expect(made.every((d) => d.status === 'posted')).toBe(true);
    expect(String(schedule.id)).toMatch(/^rec_/);
  });

  it('a payment run approved through one gateway and confirmed through both at once pays each bill once', async () => {
    // A key of its own: the owner's quota is spent by the lanes above.
    const key = (await sys.key(workspace, 'admin')).api_key;
    const vendor = (await ok(0, 'parties.create', { name: 'Inmobiliaria Centro Ltda', kind: 'vendor', tax_id: { type: 'NIT', number: '860002964-4' } }, key)).party.id;
    const bills: string[] = [];
    for (const [i, amount] of [[1, 100000000], [2, 250000000]] as const) {
      const bill = (await ok(i % 2, 'bills.create', { vendor_id: vendor, supplier_number: `ARR-${i}`, currency: 'COP', issue_date: '2026-11-01', due_date: '2026-11-10', lines: [{ description: `Arriendo ${i}`, account: '5120', quantity: 1, unit_price: amount }] }, key)).bill;
      await ok((i + 1) % 2, 'bills.post', { id: bill.id }, key);
      bills.push(bill.id);
    }
    const run = (await ok(0, 'payment_runs.create', {
      currency: 'COP', bank_account: '111005', bill_ids: bills, payment_date: '2026-11-20',
      debtor: { name: 'Réplicas SAS', tax_id: '900373115', account_number: '98765432109876', account_type: 'checking', bic: 'COLOCOBM' },
      payees: [{ vendor_id: vendor, account_number: '00112233445', account_type: 'savings', bank_code: '5600078', bic: 'COLOCOBM' }],
    }, key)).payment_run;
    // 1,000,000.00 + 2,500,000.00 (no tax, no withholding) = 3,500,000.00 = 350,000,000 cents.
    expect(run).toMatchObject({ count: 2, total: 350000000 });
    expect((await ok(1, 'payment_runs.approve', { id: run.id, amount: 350000000 }, key)).payment_run.status).toBe('approved');
    // A run is confirmed once its file has gone to the bank.
    await ok(0, 'payment_runs.export', { id: run.id, format: 'pain.001.001.03' }, key);
    const confirms = await Promise.all([0, 1].map((g) => via(g, 'payment_runs.confirm', { id: run.id, paid_on: '2026-11-20' }, key)));
    expect(confirms.map((c) => c.status).sort(), JSON.stringify(confirms.map((c) => c.body))).toEqual([200, 409]);
    for (const id of bills) expect((await ok(0, 'bills.get', { id }, key)).bill).toMatchObject({ status: 'paid', balance: 0 });
    expect(await ledgerOf('payment_runs.confirm')).toBe(1);
  });

  it('shares the rate limit: a quota of N across both gateways lets exactly N calls pass', async () => {
    const key = (await sys.key(workspace, 'admin')).api_key;
    const CALLS = PER_KEY + 20;
    const answers = await Promise.all(Array.from({ length: CALLS }, (_, i) => via(i % 2, 'parties.list', { limit: 1 }, key)));
    const passed = answers.filter((a) => a.status === 200).length;
    const limited = answers.filter((a) => a.status === 429).length;
    expect([passed, limited]).toEqual([PER_KEY, CALLS - PER_KEY]);
  });

  it('a replica that goes down is skipped: every call through both gateways is answered', async () => {
    await sys.killSubgraph('crm');
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => via(i % 2, 'parties.list', { limit: 1 }, owner)));
    expect(answers.map((a) => a.status)).toEqual(Array.from({ length: 10 }, () => 200));
  });
});
