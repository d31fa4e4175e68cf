import { randomBytes } from 'node:crypto';
import { startTestSubgraph, testPrincipal } from '@cuadra/shared/testing';
import { addDays, dateInZone, type Principal } from '@cuadra/shared';
import type { TestSubgraph } from '@cuadra/shared/testing';
import { createServer as createCrm, name as crmName } from '../../crm/src/server.ts';
import { createServer as createPayroll, name as payrollName } from '../../payroll/src/server.ts';
import { createServer, name } from '../src/server.ts';

// The e-invoicing secrets are stored only sealed: the service gets its sealing key from the
// environment, as in production (files that need a key of their own set it before starting).
process.env.CUADRA_SEAL_KEY ??= randomBytes(32).toString('base64');

let crm: TestSubgraph | undefined;
let payroll: TestSubgraph | undefined;
const andinaOf = new Map<string, string>();

/**
 * Starts the invoices subgraph beside a real crm subgraph (an invoice reads its buyer from crm
 * through the graph), and with `payroll` a real payroll subgraph whose journal feed finance pulls;
 * `peers`: others it calls (each URL read when called: one started after it). `close()` stops them all.
 */
export async function startInvoices(options: { monitorCommands?: boolean; payroll?: boolean; peers?: Record<string, Pick<TestSubgraph, 'url'>> } = {}): Promise<TestSubgraph> {
  crm = await startTestSubgraph(crmName, createCrm);
  payroll = options.payroll ? await startTestSubgraph(payrollName, createPayroll) : undefined;
  const sg = await startTestSubgraph(name, createServer, { peers: { crm, ...(payroll ? { payroll } : {}), ...options.peers }, monitorCommands: options.monitorCommands });
  const close = sg.close;
  sg.close = async () => {
    await close();
    await crm?.close();
    await payroll?.close();
  };
  return sg;
}

/** The payroll subgraph started beside invoices (`startInvoices({ payroll: true })`). */
export function payrollPeer(): TestSubgraph {
  return payroll!;
}

/** The crm subgraph started beside invoices. */
export function crmPeer(): TestSubgraph {
  return crm!;
}

/** Creates a party in the workspace's crm; its id. */
export async function party(owner: Principal, input: Record<string, unknown>): Promise<string> {
  const r = await crm!.call('parties.create', input, owner);
  if (!r.ok) throw new Error(`parties.create failed: ${r.code} ${r.message}`);
  return r.output.party.id;
}

/** The workspace's party "Tienda Andina SAS" (NIT 800197268-4), created once per workspace. */
export async function andina(owner: Principal): Promise<string> {
  const known = andinaOf.get(owner.workspace);
  if (known) return known;
  const id = await party(owner, { name: BUYER.name, kind: 'customer', email: BUYER.email, tax_id: { type: 'NIT', number: `${BUYER.tax_id.number}-${BUYER.tax_id.check_digit}` }, fiscal: BUYER.fiscal });
  andinaOf.set(owner.workspace, id);
  return id;
}

/** A technical key and PIN for the test environment (habilitación). */
export const TECH_KEY = 'fc8eac422eba16e22ffd8c6f94b3f40a6e38162c';
export const PIN = '12345';

/** A buyer with a valid NIT (DIAN's own) and the fiscal profile a DIAN document names (a company in Medellín, gran contribuyente and agente de retención de IVA). */
export const BUYER = {
  name: 'Tienda Andina SAS', email: 'facturas@andina.example.co', tax_id: { type: 'NIT', number: '800197268', check_digit: 4 },
  fiscal: { person_type: 'legal', legal_name: 'TIENDA ANDINA S.A.S.', responsibilities: ['O-13', 'O-23'], tax_scheme: '01', address: { line: 'Carrera 43A # 1-50', municipality_code: '05001', postal_code: '050021' } },
};

/** The issuer as DIAN's documents need it (Anexo Técnico 1.9, AccountingSupplierParty): Bogotá, responsible for IVA, self-withholding. */
export const ISSUER = {
  nit: '900373115-3', name: 'Cuadra Demo SAS', legal_name: 'CUADRA DEMO S.A.S.', person_type: 'legal', responsibilities: ['O-15'], tax_scheme: '01',
  address: { line: 'Calle 93 # 11-28 Oficina 502', municipality_code: '11001', postal_code: '110221' }, email: 'facturacion@cuadra.example.co', phone: '6017434000',
};

/** Opens a workspace with e-invoicing configured; returns its principal. */
export async function configuredWorkspace(sg: TestSubgraph, overrides: Record<string, unknown> = {}): Promise<Principal> {
  const owner = testPrincipal();
  const r = await sg.call('einvoicing.configure', {
    issuer: ISSUER, technical_key: TECH_KEY, software_pin: PIN, software_id: `sw-${owner.workspace.slice(3, 15)}`.replace(/_/g, '-'),
    software_maker: { name: 'Cuadra Software SAS', nit: '901234567-7' }, software_name: 'Cuadra', payment_means: '47',
    numbering: { invoice: { prefix: 'SETP', from: 990000000, to: 995000000, resolution: '18760000001', valid_from: '2026-01-01', valid_to: '2027-12-31' }, credit_note: { prefix: 'NC', from: 1, to: 1000 } },
    ...overrides,
  }, owner);
  if (!r.ok) throw new Error(`configure failed: ${r.code} ${r.message}`);
  return owner;
}

/** Today in Bogotá: the date a document must carry when it is signed and sent to DIAN the same day (FAD09e). */
export function today(): string {
  return dateInZone(new Date(), 'America/Bogota');
}

/** Creates a draft invoice dated today (due in 30 days) and returns its output: what a signed document sent to DIAN needs. */
export async function draftToday(sg: TestSubgraph, owner: Principal, input: Record<string, unknown> = {}) {
  return draft(sg, owner, { issue_date: today(), due_date: addDays(today(), 30), ...input });
}

/** Creates a draft invoice and returns its output. */
export async function draft(sg: TestSubgraph, owner: Principal, input: Record<string, unknown> = {}) {
  const r = await sg.call('invoices.create', {
    customer_id: await andina(owner), currency: 'COP', issue_date: '2026-11-02', due_date: '2026-12-02',
    lines: [{ description: 'Consultoría', quantity: 2, unit_price: 15000000, tax_rate_ppm: 190000 }], ...input,
  }, owner);
  if (!r.ok) throw new Error(`create failed: ${r.code} ${r.field} ${r.message}`);
  return r.output.invoice;
}

/** The `field` of a GraphQL answer; its first error thrown as an Error carrying the contract's `code` and `field`. */
export function unwrap(r: { status: number; body: any }, field: string) {
  if (r.body.errors?.length) throw Object.assign(new Error(r.body.errors[0].message), { code: r.body.errors[0].extensions?.code, field: r.body.errors[0].extensions?.field });
  return r.body.data[field];
}
