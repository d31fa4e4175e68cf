// The demo company (issue 20): a year of a Colombian SME's activity made THROUGH THE TOOLS over
// HTTP against a running gateway, with an owner API key. `npm run cuadra -- demo` runs it against
// `npm start`'s system; test/demo.test.ts runs the same `runDemo` against a test system.
//
// Deterministic: everything comes from `planDemo(seed, size, today)`, a pure function (no server,
// no clock of its own). Idempotent: every call carries `Idempotency-Key: demo-<seed>-<step>`, so a
// re-run after a crash (same key, seed and anchor day) replays the calls already done and makes only
// the missing ones. Paced: at most `perSecond` calls a second, and a 429 waits its Retry-After.
// Optional parts (bills, payment runs, payroll, bank, dashboards) run only when the catalog
// (GET /v1/tools) lists their tools.
import { nitCheckDigit } from '../shared/src/dian/nit.ts';
import { buildProducts } from '../gateway/src/catalog.ts';
import { homeDashboards } from '../gateway/src/canvas/home.ts';
import { localDate } from '../shared/src/periods.ts';

export type DemoSize = 'full' | 'small';

export interface DemoOptions {
  gatewayUrl: string;
  apiKey: string;
  seed?: number;
  size?: DemoSize;
  /** The anchor day (YYYY-MM-DD): the year of activity ends here. Keep it for re-runs. */
  today?: string;
  /** The owner's e-mail: invited as a person (owner role) so they can sign in to the pages. */
  ownerEmail?: string;
  /** Most calls a second (the default credential quota is 600 a minute). */
  perSecond?: number;
  log?: (line: string) => void;
}

// ─── the plan ───────────────────────────────────────────────────────────────────────────────

/** mulberry32: a small seeded generator, the same numbers for the same seed everywhere. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const CUSTOMERS = [
  ['Tienda Andina SAS', 'Bogotá', 'Cundinamarca'], ['Ferretería El Búho Ltda', 'Medellín', 'Antioquia'], ['Café Los Nevados SAS', 'Manizales', 'Caldas'],
  ['Distribuidora Caribe SAS', 'Barranquilla', 'Atlántico'], ['Clínica Santa Lucía SAS', 'Cali', 'Valle del Cauca'], ['Colegio Nuevo Horizonte', 'Bucaramanga', 'Santander'],
  ['Textiles La Sabana SAS', 'Bogotá', 'Cundinamarca'], ['Hotel Mar Azul SAS', 'Cartagena', 'Bolívar'], ['Agroinsumos del Llano SAS', 'Villavicencio', 'Meta'],
  ['Transportes Eje Cafetero SAS', 'Pereira', 'Risaralda'], ['Panadería Don Julio SAS', 'Medellín', 'Antioquia'], ['Constructora Altos del Norte SAS', 'Bogotá', 'Cundinamarca'],
] as const;
const VENDORS = [
  ['Inmobiliaria Chapinero SAS', '5120', 'Arriendo de oficina', 350000000],
  ['Telecomunicaciones Andes SAS', '5135', 'Internet y telefonía', 28990000],
  ['Papelería Central Ltda', '5195', 'Útiles de oficina', 0],
  ['Contadores Asociados SAS', '5110', 'Honorarios contables', 180000000],
  ['Mantenimientos Técnicos SAS', '5145', 'Mantenimiento de equipos', 0],
  ['Energía del Centro SA ESP', '5135', 'Energía eléctrica', 0],
] as const;
const ITEMS = [
  { name: 'Consultoría (hora)', kind: 'service', sku: 'CONS-H', unit: 'HUR', price: 18000000, tax_rate_ppm: 190000 },
  { name: 'Licencia de software anual', kind: 'product', sku: 'LIC-A', unit: '94', price: 240000000, tax_rate_ppm: 190000 },
  { name: 'Soporte mensual', kind: 'service', sku: 'SOP-M', unit: '94', price: 45000000, tax_rate_ppm: 190000 },
  { name: 'Capacitación en sitio', kind: 'service', sku: 'CAP-1', unit: '94', price: 120000000, tax_rate_ppm: 190000 },
  { name: 'Café tostado 500 g', kind: 'product', sku: 'CAF-500', unit: '94', price: 3200000, tax_rate_ppm: 50000 },
  { name: 'Libro: Contabilidad para pymes', kind: 'product', sku: 'LIB-PY', unit: '94', price: 8500000, tax_rate_ppm: 0 },
] as const;
const EMPLOYEES = [
  ['Laura Martínez Rojas', 'Gerente comercial', 650000000, 1],
  ['Andrés Felipe Gómez', 'Consultor', 420000000, 1],
  ['Carolina Restrepo', 'Auxiliar contable', 230000000, 1],
  ['Julián Ospina', 'Técnico de soporte', 180000000, 2],
] as const;

/** A NIT body of 9 digits from the generator, with its DIAN check digit (shared/src/nit.ts). */
function nit(r: () => number): string {
  const prefixes = ['800', '830', '860', '900', '901'];
  const body = prefixes[Math.floor(r() * prefixes.length)] + String(Math.floor(r() * 1e6)).padStart(6, '0');
  return `${body}-${nitCheckDigit(body)}`;
}

const iso = (d: Date) => d.toISOString().slice(0, 10);
function addDays(day: string, n: number): string {
  const d = new Date(`${day}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + n);
  return iso(d);
}
const minDay = (a: string, b: string) => (a < b ? a : b);

export interface PlannedInvoice {
  step: string;
  customer: number;
  issue_date: string;
  due_date: string;
  lines: { item: number; quantity: number }[];
  /** Σ quantity × price: no discounts, integer quantities, so this is exact. */
  subtotal: number;
  tax_total: number;
  send: boolean;
  /** Payments against it: amount in cents (negative = "the rest"). */
  payments: { date: string; part: 'full' | 'half' }[];
  credit: boolean;
}

export interface DemoPlan {
  seed: number;
  today: string;
  customers: { name: string; nit: string; city: string; region: string; email: string }[];
  vendors: { name: string; nit: string; account: string; label: string; monthly: number; bank_account: string }[];
  items: typeof ITEMS;
  invoices: PlannedInvoice[];
  bills: { step: string; vendor: number; supplier_number: string; issue_date: string; due_date: string; amount: number; paid: boolean }[];
  employees: typeof EMPLOYEES;
  payroll_month: string;
}

/** Everything the demo will make, from the seed alone. Pure: the test uses it for its hand sums. */
export function planDemo(seed: number, size: DemoSize, today: string): DemoPlan {
  const r = rng(seed);
  const nCustomers = size === 'full' ? 12 : 4;
  const nVendors = size === 'full' ? 6 : 3;
  const nInvoices = size === 'full' ? 150 : 12;
  const months = size === 'full' ? 12 : 3;
  const customers = CUSTOMERS.slice(0, nCustomers).map(([name, city, region]) => ({
    name, city, region, nit: nit(r), email: `facturacion@${name.toLowerCase().normalize('NFD').replace(/[^a-z]/g, '').slice(0, 18)}.example.co`,
  }));
  const vendors = VENDORS.slice(0, nVendors).map(([name, account, label, monthly]) => ({
    name, account, label, monthly, nit: nit(r), bank_account: String(Math.floor(r() * 1e10)).padStart(11, '0'),
  }));
  const span = size === 'full' ? 365 : months * 30;
  const invoices: PlannedInvoice[] = [];
  for (let i = 0; i < nInvoices; i++) {
    // Spread over the whole window, a little busier towards its end (the business grows).
    const age = Math.floor(span * (1 - r() ** 0.8));
    const issue = addDays(today, -Math.min(age, span - 1));
    const customer = Math.floor(r() * nCustomers);
    const lineCount = 1 + Math.floor(r() * 3);
    const lines: PlannedInvoice['lines'] = [];
    for (let l = 0; l < lineCount; l++) {
      const item = Math.floor(r() * ITEMS.length);
      if (lines.some((x) => x.item === item)) continue;
      const quantity = ITEMS[item].price >= 100000000 ? 1 : 1 + Math.floor(r() * (ITEMS[item].kind === 'product' ? 40 : 12));
      lines.push({ item, quantity });
    }
    const subtotal = lines.reduce((s, l) => s + l.quantity * ITEMS[l.item].price, 0);
    const tax_total = lines.reduce((s, l) => s + Math.round((l.quantity * ITEMS[l.item].price * ITEMS[l.item].tax_rate_ppm) / 1e6), 0);
    const due = addDays(issue, 30);
    const daysOld = (Date.parse(today) - Date.parse(issue)) / 86400000;
    const roll = r();
    const payments: PlannedInvoice['payments'] = [];
    let credit = false;
    if (daysOld > 20) {
      if (roll < 0.68) payments.push({ date: minDay(addDays(issue, 10 + Math.floor(r() * 35)), today), part: 'full' });
      else if (roll < 0.82) payments.push({ date: minDay(addDays(issue, 10 + Math.floor(r() * 25)), today), part: 'half' });
      else if (roll < 0.86) credit = true;
    }
    invoices.push({ step: `inv${String(i).padStart(3, '0')}`, customer, issue_date: issue, due_date: due, lines, subtotal, tax_total, send: daysOld <= 45 && r() < 0.7, payments, credit });
  }
  // At least a few credit notes, whatever the dice said (on unpaid invoices older than 20 days).
  const wantCredits = size === 'full' ? 4 : 1;
  for (const inv of invoices) {
    if (invoices.filter((x) => x.credit).length >= wantCredits) break;
    if (!inv.credit && inv.payments.length === 0 && Date.parse(today) - Date.parse(inv.issue_date) > 20 * 86400000) inv.credit = true;
  }
  invoices.sort((a, b) => a.issue_date.localeCompare(b.issue_date) || a.step.localeCompare(b.step));
  const bills: DemoPlan['bills'] = [];
  for (let m = months; m >= 1; m--) {
    const issue = addDays(today, -m * 30 + 3);
    vendors.forEach((v, vi) => {
      const amount = v.monthly || (vi === 2 ? 2000000 + Math.floor(r() * 60) * 100000 : 0);
      if (!amount && r() < 0.6) return;
      const value = amount || 15000000 + Math.floor(r() * 400) * 100000;
      bills.push({ step: `bill-${m}-${vi}`, vendor: vi, supplier_number: `FV-${1000 + m * 10 + vi}`, issue_date: issue, due_date: addDays(issue, 30), amount: value, paid: m > 1 });
    });
  }
  const t = new Date(`${today}T00:00:00Z`);
  const last = new Date(Date.UTC(t.getUTCFullYear(), t.getUTCMonth() - 1, 1));
  return { seed, today, customers, vendors, items: ITEMS, invoices, bills, employees: EMPLOYEES, payroll_month: iso(last).slice(0, 7) };
}

// ─── the client ─────────────────────────────────────────────────────────────────────────────

export class DemoError extends Error {}

/** Calls tools over HTTP, paced, with an Idempotency-Key each, waiting out 429s. */
export class ToolClient {
  #next = 0;
  calls = 0;
  replays = 0;
  readonly gatewayUrl: string;
  readonly apiKey: string;
  readonly perSecond: number;
  constructor(gatewayUrl: string, apiKey: string, perSecond = 8) {
    this.gatewayUrl = gatewayUrl;
    this.apiKey = apiKey;
    this.perSecond = perSecond;
  }

  async #pace() {
    const now = Date.now();
    const at = Math.max(now, this.#next);
    this.#next = at + 1000 / this.perSecond;
    if (at > now) await new Promise((res) => setTimeout(res, at - now));
  }

  async request(method: string, pathname: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; headers: Headers; body: any }> {
    for (let attempt = 0; ; attempt++) {
      await this.#pace();
      let res: Response;
      try {
        res = await fetch(`${this.gatewayUrl}${pathname}`, {
          method, body: body === undefined ? undefined : JSON.stringify(body),
          headers: { authorization: `Bearer ${this.apiKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
        });
      } catch (err) {
        if (attempt < 5) { await new Promise((r) => setTimeout(r, 1000 * (attempt + 1))); continue; }
        throw err;
      }
      const text = await res.text();
      let parsed: any = text;
      try { parsed = JSON.parse(text); } catch { /* not JSON */ }
      // Rate limited, or an earlier attempt with this key still in flight: wait and retry the same key.
      if ((res.status === 429 || (res.status === 409 && parsed?.code === 'idempotency_in_progress') || res.status === 503) && attempt < 30) {
        const wait = Number(res.headers.get('retry-after')) || 1;
        await new Promise((r) => setTimeout(r, wait * 1000));
        continue;
      }
      return { status: res.status, headers: res.headers, body: parsed };
    }
  }

  /** Invokes a tool with `Idempotency-Key: key`; the output, or a DemoError saying what was refused. */
  async invoke(tool: string, input: unknown, key: string): Promise<any> {
    this.calls++;
    const r = await this.request('POST', `/v1/tools/${tool}:invoke`, input, { 'idempotency-key': key });
    if (r.headers.get('idempotent-replayed') === 'true') this.replays++;
    if (r.status !== 200) throw new DemoError(`${tool} (${key}) → ${r.status} ${typeof r.body === 'string' ? r.body : JSON.stringify(r.body)}`);
    return r.body.output;
  }
}

// ─── the run ────────────────────────────────────────────────────────────────────────────────

export interface DemoResult {
  plan: DemoPlan;
  counts: Record<string, number>;
  calls: number;
  replays: number;
  dashboard_id: string | null;
  dashboard_url: string | null;
  invite_url: string | null;
  skipped: string[];
}

const TECH_KEY = 'fc8eac422eba16e22ffd8c6f94b3f40a6e38162c';

/** Makes the demo company in the workspace of `apiKey` (an owner key). Safe to run again. */
export async function runDemo(opts: DemoOptions): Promise<DemoResult> {
  const seed = opts.seed ?? 2026;
  const size = opts.size ?? 'full';
  // The workspace's calendar day (Colombia, UTC−5), not UTC's: after 19:00 there UTC is already tomorrow, and the
  // product refuses a payment dated after its own today.
  const today = opts.today ?? localDate(new Date());
  const log = opts.log ?? (() => {});
  const plan = planDemo(seed, size, today);
  const api = new ToolClient(opts.gatewayUrl.replace(/\/$/, ''), opts.apiKey, opts.perSecond ?? 8);
  const k = (step: string) => `demo-${seed}-${step}`;
  const counts: Record<string, number> = {};
  const bump = (name: string) => { counts[name] = (counts[name] ?? 0) + 1; };
  const skipped: string[] = [];

  const catalog = await api.request('GET', '/v1/tools?limit=500');
  if (catalog.status !== 200) throw new DemoError(`GET /v1/tools → ${catalog.status} ${JSON.stringify(catalog.body)}`);
  const tools = new Set<string>((catalog.body.tools ?? []).map((t: { name: string }) => t.name));
  const has = (...names: string[]) => names.every((n) => tools.has(n));
  for (const needed of ['parties.create', 'items.create', 'einvoicing.configure', 'invoices.create', 'invoices.post', 'payments.register']) {
    if (!tools.has(needed)) throw new DemoError(`The catalog has no ${needed}: the demo needs the invoices and crm subgraphs.`);
  }

  // 1. E-invoicing against the built-in sandbox (the test set's technical key).
  log('e-invoicing: sandbox numbering SETP 990000001–995000000');
  await api.invoke('einvoicing.configure', {
    issuer: { nit: '900373115-3', name: 'Cuadra Demo SAS', legal_name: 'CUADRA DEMO S.A.S.', responsibilities: ['O-15'], address: { line: 'Calle 93 # 11-28 Oficina 502', municipality_code: '11001', postal_code: '110221' }, email: 'facturacion@cuadra.example.co' },
    technical_key: TECH_KEY, software_pin: '75315', payment_means: '47',
    numbering: { invoice: { prefix: 'SETP', from: 990000001, to: 995000000, resolution: '18760000001' }, credit_note: { prefix: 'NC', from: 1, to: 5000 } },
  }, k('einvoicing'));

  // 2. Customers, vendors, items.
  const customerIds: string[] = [];
  for (const [i, c] of plan.customers.entries()) {
    const out = await api.invoke('parties.create', {
      name: c.name, kind: 'customer', tax_id: { type: 'NIT', number: c.nit }, email: c.email,
      addresses: [{ line1: `Calle ${10 + i * 7} # ${20 + i}-${10 + i}`, city: c.city, region: c.region, country: 'CO' }], tags: ['demo'],
    }, k(`customer-${i}`));
    customerIds.push(out.party.id);
    bump('customers');
  }
  const vendorIds: string[] = [];
  for (const [i, v] of plan.vendors.entries()) {
    const out = await api.invoke('parties.create', { name: v.name, kind: 'vendor', tax_id: { type: 'NIT', number: v.nit }, tags: ['demo'] }, k(`vendor-${i}`));
    vendorIds.push(out.party.id);
    bump('vendors');
  }
  log(`parties: ${customerIds.length} customers, ${vendorIds.length} vendors`);
  const itemIds: string[] = [];
  for (const [i, it] of plan.items.entries()) {
    const out = await api.invoke('items.create', { name: it.name, kind: it.kind, sku: it.sku, unit: it.unit, price: { amount: it.price, currency: 'COP' }, tax_rate_ppm: it.tax_rate_ppm }, k(`item-${i}`));
    itemIds.push(out.item.id);
    bump('items');
  }
  log(`items: ${itemIds.length} (VAT 19 %, 5 %, 0 %)`);

  // 3. Invoices: create, post, some sent to the sandbox, paid in full or in part, a few credited.
  for (const [n, inv] of plan.invoices.entries()) {
    const created = await api.invoke('invoices.create', {
      customer_id: customerIds[inv.customer], currency: 'COP', issue_date: inv.issue_date, due_date: inv.due_date,
      lines: inv.lines.map((l) => ({ item_id: itemIds[l.item], quantity: l.quantity })),
    }, k(`${inv.step}-create`));
    const id = created.invoice.id as string;
    const posted = (await api.invoke('invoices.post', { id }, k(`${inv.step}-post`))).invoice;
    bump('invoices');
    if (inv.send && tools.has('invoices.send')) {
      await api.invoke('invoices.send', { id }, k(`${inv.step}-send`));
      bump('sent');
    }
    for (const [p, pay] of inv.payments.entries()) {
      const amount = pay.part === 'full' ? posted.amount_due : Math.floor(posted.amount_due / 2);
      await api.invoke('payments.register', {
        customer_id: customerIds[inv.customer], amount, currency: 'COP', date: pay.date, method: 'bank_transfer',
        reference: `TRF-${posted.number}`, invoices: [{ invoice_id: id, amount }],
      }, k(`${inv.step}-pay${p}`));
      bump(pay.part === 'full' ? 'payments_full' : 'payments_partial');
    }
    if (inv.credit && tools.has('invoices.credit_note')) {
      await api.invoke('invoices.credit_note', { invoice_id: id, concept: 2, reason: 'Factura anulada a solicitud del cliente', issue_date: minDay(addDays(inv.issue_date, 15), today) }, k(`${inv.step}-credit`));
      bump('credit_notes');
    }
    if ((n + 1) % 25 === 0 || n + 1 === plan.invoices.length) log(`invoices: ${n + 1}/${plan.invoices.length} posted`);
  }

  // 4. Bills, paid month by month; the last month's through a payment run.
  const openBills: { id: string; vendor: number }[] = [];
  if (has('bills.create', 'bills.post', 'bills.pay')) {
    for (const b of plan.bills) {
      const v = plan.vendors[b.vendor];
      const bill = (await api.invoke('bills.create', {
        vendor_id: vendorIds[b.vendor], supplier_number: b.supplier_number, currency: 'COP', issue_date: b.issue_date, due_date: b.due_date,
        lines: [{ description: v.label, account: v.account, quantity: 1, unit_price: b.amount, tax_rate_ppm: v.account === '5120' ? 0 : 190000 }],
      }, k(`${b.step}-create`))).bill;
      const posted = (await api.invoke('bills.post', { id: bill.id }, k(`${b.step}-post`))).bill;
      bump('bills');
      if (b.paid) {
        await api.invoke('bills.pay', {
          vendor_id: vendorIds[b.vendor], amount: posted.amount_due, currency: 'COP', date: minDay(addDays(b.issue_date, 20), today), bank_account: '111010',
          reference: `PAGO-${b.supplier_number}`, bills: [{ bill_id: bill.id, amount: posted.amount_due }],
        }, k(`${b.step}-pay`));
        bump('bills_paid');
      } else openBills.push({ id: bill.id, vendor: b.vendor });
    }
    log(`bills: ${counts.bills ?? 0} posted, ${counts.bills_paid ?? 0} paid`);
  } else skipped.push('bills (no bills.create/post/pay in the catalog)');

  if (openBills.length && has('payment_runs.create', 'payment_runs.approve')) {
    const vendorsInRun = [...new Set(openBills.map((b) => b.vendor))];
    const run = (await api.invoke('payment_runs.create', {
      currency: 'COP', bank_account: '111010', bill_ids: openBills.map((b) => b.id), payment_date: today,
      debtor: { name: 'Cuadra Demo SAS', tax_id: '900373115', account_number: '00123456789', account_type: 'checking', bank_code: '7' },
      payees: vendorsInRun.map((v) => ({ vendor_id: vendorIds[v], account_number: plan.vendors[v].bank_account, account_type: 'savings', bank_code: '7' })),
    }, k('payrun-create'))).payment_run;
    await api.invoke('payment_runs.approve', { id: run.id, amount: run.total }, k('payrun-approve'));
    if (tools.has('payment_runs.export')) await api.invoke('payment_runs.export', { id: run.id, format: 'pain.001.001.03' }, k('payrun-export'));
    if (tools.has('payment_runs.confirm')) await api.invoke('payment_runs.confirm', { id: run.id, paid_on: today }, k('payrun-confirm'));
    bump('payment_runs');
    log(`payment run: ${run.count} bills, COP ${(run.total / 100).toLocaleString('es-CO')}`);
  } else if (openBills.length) skipped.push('payment run (no payment_runs.* in the catalog)');

  // 5. Employees and last month's payroll.
  if (tools.has('employees.create')) {
    const r = rng(seed + 1);
    for (const [i, [name, position, salary, arl]] of plan.employees.entries()) {
      await api.invoke('employees.create', {
        name, position, document: { type: 'CC', number: String(10000000 + Math.floor(r() * 89999999)) }, hire_date: addDays(today, -400 - i * 90),
        salary: { amount: salary, currency: 'COP' }, contract_type: 'indefinite', arl_class: arl,
      }, k(`employee-${i}`));
      bump('employees');
    }
    if (has('payroll.run', 'payroll.approve', 'payroll.post')) {
      const computed = await api.invoke('payroll.run', { month: plan.payroll_month }, k('payroll-run'));
      await api.invoke('payroll.approve', { id: computed.run.id, amount: computed.run.totals.net }, k('payroll-approve'));
      await api.invoke('payroll.post', { id: computed.run.id }, k('payroll-post'));
      bump('payroll_runs');
      log(`payroll ${plan.payroll_month}: ${plan.employees.length} employees, net COP ${(computed.run.totals.net / 100).toLocaleString('es-CO')}`);
    } else skipped.push('payroll (no payroll.run in the catalog)');
  } else skipped.push('employees (no employees.create in the catalog)');

  // 6. A bank account and its statement (CSV), the last 60 days of collections.
  if (has('bank.create_account', 'bank.import_statement')) {
    const account = (await api.invoke('bank.create_account', {
      name: 'Cuenta corriente principal', bank_name: 'Bancolombia', account_number: '001-234567-89', currency: 'COP', puc_account: '111010',
    }, k('bank-account'))).account;
    const rows = ['fecha;descripcion;valor;referencia;id'];
    let line = 0;
    for (const inv of plan.invoices) {
      for (const pay of inv.payments) {
        if (Date.parse(today) - Date.parse(pay.date) > 60 * 86400000) continue;
        const amount = (inv.subtotal + inv.tax_total) / (pay.part === 'full' ? 1 : 2);
        rows.push(`${pay.date.split('-').reverse().join('/')};Transferencia ${plan.customers[inv.customer].name};${(Math.floor(amount) / 100).toFixed(2).replace('.', ',')};${inv.step};DEMO-${seed}-${line++}`);
      }
    }
    if (rows.length > 1) {
      const imported = (await api.invoke('bank.import_statement', {
        bank_id: account.id, format: 'csv', content: `${rows.join('\n')}\n`, statement_id: `demo-${seed}-${today}`,
        csv: { date: 'fecha', description: 'descripcion', amount: 'valor', reference: 'referencia', id: 'id', date_format: 'DD/MM/YYYY', decimal_separator: ',', delimiter: ';' },
      }, k('bank-import'))).import;
      counts.bank_lines = imported.entries;
    }
    bump('bank_accounts');
    log(`bank: 1 account, ${counts.bank_lines ?? 0} statement lines`);
  } else skipped.push('bank (no bank.* in the catalog)');

  // 7. Dashboards.
  let dashboardId: string | null = null;
  if (tools.has('dashboards.save')) {
    const money = (label: string, metric: string) => ({ label, query: { metric, days: 365 }, format: 'money' as const, currency: 'COP' });
    const overview = await api.invoke('dashboards.save', {
      key: 'demo-resumen', title: 'Resumen del año',
      blocks: [
        { type: 'stats', title: 'Indicadores', items: [money('Ingresos (12 meses)', 'revenue'), money('Cartera por cobrar', 'ar_outstanding'), { label: 'Facturas', query: { metric: 'invoices_status', days: 365 }, format: 'number' }] },
        { type: 'chart', title: 'Ingresos por mes', chart: 'bar', query: { metric: 'revenue', days: 365, interval: 'month' } },
        { type: 'table', title: 'Cartera por edades', query: { metric: 'ar_aging' } },
        { type: 'table', title: 'Mejores clientes', query: { metric: 'top_customers', days: 365, limit: 5 } },
        { type: 'records', title: 'Últimas facturas', records: { source: 'invoices', limit: 10 } },
        { type: 'agenda', title: 'Agenda', agenda: { days: 30 } },
      ],
    }, k('dashboard-overview'));
    dashboardId = overview.dashboard.id;
    bump('dashboards');
    if (has('bills.create')) {
      await api.invoke('dashboards.save', {
        key: 'demo-pagos', title: 'Cuentas por pagar',
        blocks: [
          { type: 'stats', items: [money('Gastos (12 meses)', 'expenses'), money('Por pagar', 'ap_outstanding')] },
          { type: 'table', title: 'Proveedores', query: { metric: 'top_vendors', days: 365, limit: 5 } },
          { type: 'records', title: 'Facturas de proveedores', records: { source: 'bills', limit: 10 } },
        ],
      }, k('dashboard-payables'));
      bump('dashboards');
    }
    // The home dashboard of each module (sales, purchases, finance, payroll, projects) over what this catalog reads.
    const reads = buildProducts().reads as unknown as Record<'metrics' | 'sources' | 'agenda', Record<string, unknown>>;
    for (const home of homeDashboards({ metrics: new Set(Object.keys(reads.metrics ?? {})), sources: new Set(Object.keys(reads.sources ?? {})), agenda: new Set(Object.keys(reads.agenda ?? {})) }).reverse()) {
      await api.invoke('dashboards.save', home, k(`dashboard-${home.key}`));
      bump('dashboards');
    }
    log(`dashboards: ${counts.dashboards}`);
  } else skipped.push('dashboards (no dashboards.save in the catalog)');

  // 8. The owner as a person who can sign in: an owner invitation (its link is shown once).
  let inviteUrl: string | null = null;
  if (opts.ownerEmail && tools.has('members.invite')) {
    try {
      const invited = await api.invoke('members.invite', { email: opts.ownerEmail, role: 'owner', name: 'Dueño de la empresa demo' }, k('invite-owner'));
      inviteUrl = typeof invited.invite_url === 'string' && invited.invite_url.startsWith('http') ? invited.invite_url : null;
    } catch (err) {
      // Already a member (a person who signed up before): they sign in with their own password.
      if (!(err instanceof DemoError && / 409 /.test(err.message))) throw err;
    }
  }

  return {
    plan, counts, calls: api.calls, replays: api.replays, dashboard_id: dashboardId,
    dashboard_url: dashboardId ? `${api.gatewayUrl}/dashboards/${dashboardId}` : null, invite_url: inviteUrl, skipped,
  };
}
