import { CuadraError, type ToolContext, REPAIR_AFTER_MS } from '@cuadra/shared';
import { cufe } from '../../e-documents/cufe.ts';
import type { BillLineAccount } from '../../accounting/payable-accounts.ts';
import { billLines, bills, billTotals, type BillWithholdingType } from '../bills/model.ts';
import { createDraftBill, type BillCreateInput } from '../bills/tools/create.ts';
import { documents, documentSearchText, type DocumentDoc, type DocumentInvoice, type DocumentStatus, type SupplierPending } from './model.ts';
import { DocumentProblem, readSupplierInvoice, type UblInvoice } from './ubl.ts';


/** DIAN tax scheme ids of withholdings (Anexo Técnico 1.9, table 13.2.2) and the bill's names for them. */
const WITHHOLDING_SCHEMES: Record<string, BillWithholdingType> = { '06': 'retefuente', '05': 'reteiva', '07': 'reteica' };

const VAT_RATES = new Set([190000, 50000, 0]);

/** The bill a supplier's invoice becomes, after every check that can be made without the supplier's technical key. */
export function billFromInvoice(inv: UblInvoice, account: BillLineAccount, technicalKey?: string): Omit<BillCreateInput, 'vendor_id'> {
  // The CUFE: DIAN's SHA-384 over the invoice's own fields and the range's technical key (ClTec).
  // The key is the supplier's secret, so without it only the CUFE's form and its agreement with the
  // wrapper can be checked; with it (the caller may have it) the hash is recomputed and must match.
  if (!/^[0-9a-f]{96}$/.test(inv.cufe)) throw new DocumentProblem(`The invoice's CUFE (cbc:UUID) is missing or is not 96 lower-case hex digits of a SHA-384: "${inv.cufe.slice(0, 120)}".`);
  if (inv.cufe_scheme !== null && inv.cufe_scheme !== 'CUFE-SHA384') throw new DocumentProblem(`The invoice's cbc:UUID is a ${inv.cufe_scheme}, not a CUFE-SHA384.`);
  if (inv.wrapper?.parent_uuid && inv.wrapper.parent_uuid !== inv.cufe) throw new DocumentProblem(`The AttachedDocument names CUFE ${inv.wrapper.parent_uuid} but the invoice inside it carries ${inv.cufe}.`);
  if (inv.wrapper?.parent_id && inv.wrapper.parent_id !== inv.number) throw new DocumentProblem(`The AttachedDocument names invoice ${inv.wrapper.parent_id} but the invoice inside it is ${inv.number}.`);
  if (inv.environment !== '1' && inv.environment !== '2') throw new DocumentProblem(`The invoice's cbc:ProfileExecutionID is "${inv.environment}", not 1 (production) or 2 (test).`);
  if (!/^\d{5,15}$/.test(inv.supplier_nit)) throw new DocumentProblem(`The supplier's NIT "${inv.supplier_nit}" is not a NIT without check digit.`);
  if (!/^[A-Z]{3}$/.test(inv.currency)) throw new DocumentProblem(`The invoice's currency "${inv.currency}" is not an ISO 4217 code.`);
  for (const [scheme, value] of Object.entries(inv.taxes)) {
    if (scheme !== '01' && value !== 0) throw new DocumentProblem(`The invoice charges tax scheme ${scheme} (${scheme === '04' ? 'INC' : scheme === '03' ? 'ICA' : 'unknown'}); a bill records VAT (01) only.`);
  }
  const t = inv.totals;
  if (t.allowances || t.charges || t.prepaid) throw new DocumentProblem('The invoice has document-level allowances, charges or a prepaid amount; a bill cannot record them.');

  const lines = inv.lines.map((l, i) => {
    if (!VAT_RATES.has(l.vat_rate_ppm)) throw new DocumentProblem(`Line ${i + 1}: VAT at ${l.vat_rate_ppm / 10000} % is not a Colombian rate (19, 5 or 0 %).`);
    return { description: l.description, account, quantity: l.quantity, unit_price: l.unit_price, tax_rate_ppm: l.vat_rate_ppm as 190000 | 50000 | 0 };
  });
  const computed = billLines(lines);
  computed.forEach((c, i) => {
    const l = inv.lines[i]!;
    if (c.subtotal !== l.net) throw new DocumentProblem(`Line ${i + 1}: ${l.quantity} × ${l.unit_price / 100} is ${c.subtotal / 100}, but the line says ${l.net / 100}.`);
    if (c.tax !== l.vat) throw new DocumentProblem(`Line ${i + 1}: VAT at ${l.vat_rate_ppm / 10000} % of ${c.subtotal / 100} is ${c.tax / 100}, but the line says ${l.vat / 100}.`);
  });
  const rates = inv.withholdings.map((w) => {
    const type = WITHHOLDING_SCHEMES[w.scheme];
    if (!type) throw new DocumentProblem(`The invoice names withholding scheme "${w.scheme}"; only 06 (retefuente), 05 (ReteIVA) and 07 (ReteICA) are known.`);
    return { type, rate_ppm: w.rate_ppm };
  });
  if (new Set(rates.map((r) => r.type)).size !== rates.length) throw new DocumentProblem('The invoice names one withholding type twice; a bill takes one rate per type.');
  const totals = billTotals(computed, rates, inv.issue_date);
  if (totals.subtotal !== t.line_extension) throw new DocumentProblem(`The lines add up to ${totals.subtotal / 100}, but cbc:LineExtensionAmount says ${t.line_extension / 100}.`);
  if (totals.tax_total !== (inv.taxes['01'] ?? 0)) throw new DocumentProblem(`The lines' VAT adds up to ${totals.tax_total / 100}, but the invoice's VAT total says ${(inv.taxes['01'] ?? 0) / 100}.`);
  if (totals.total !== t.tax_inclusive) throw new DocumentProblem(`Lines plus VAT are ${totals.total / 100}, but cbc:TaxInclusiveAmount says ${t.tax_inclusive / 100}.`);
  if (totals.total !== t.payable) throw new DocumentProblem(`Lines plus VAT are ${totals.total / 100}, but cbc:PayableAmount says ${t.payable / 100}.`);
  // Per type: the bill splits retención en la fuente by its lines' concepts, the invoice states one amount.
  rates.forEach((r, i) => {
    const stated = inv.withholdings[i]!.amount;
    const ours = totals.withholdings.filter((w) => w.type === r.type);
    const amount = ours.reduce((s, w) => s + w.amount, 0);
    const base = ours.reduce((s, w) => s + w.base, 0);
    if (amount !== stated) throw new DocumentProblem(`${r.type} at ${r.rate_ppm / 10000} % of ${base / 100} is ${amount / 100}, but the invoice says ${stated / 100}.`);
  });
  if (technicalKey !== undefined) {
    const expected = cufe({
      number: inv.number, issueDate: inv.issue_date, issueTime: inv.issue_time, subtotal: t.line_extension, vat: inv.taxes['01'] ?? 0, inc: inv.taxes['04'] ?? 0,
      ica: inv.taxes['03'] ?? 0, total: t.payable, issuerNit: inv.supplier_nit, buyerId: inv.buyer_id, key: technicalKey, environment: inv.environment as '1' | '2',
    });
    if (expected !== inv.cufe) throw new DocumentProblem(`The CUFE does not match the invoice: recomputed from its fields and the technical key it is ${expected}, the invoice carries ${inv.cufe}.`);
  }
  const dueDate = inv.due_date && inv.due_date >= inv.issue_date ? inv.due_date : undefined;
  return {
    supplier_number: inv.number, currency: inv.currency, issue_date: inv.issue_date, ...(dueDate ? { due_date: dueDate } : {}),
    notes: `From the supplier's e-invoice ${inv.number}, CUFE ${inv.cufe}.`, lines, ...(rates.length ? { withholdings: rates } : {}),
  };
}

/** The crm party holding a NIT, read through the graph (one indexed lookup there); null when none. */
async function partyByNit(ctx: ToolContext, nit: string): Promise<{ id: string } | null> {
  if (!ctx.graph) throw new CuadraError('unavailable', 'The crm service is not configured here; nothing was done.');
  const data = await ctx.graph('crm', 'query($n: String!) { partyByTaxId(type: "NIT", number: $n) { id } }', { n: nit });
  return (data.partyByTaxId as { id: string } | null) ?? null;
}

/** Sets the outcome of a claimed document: one conditional update on the claim, so a late process cannot overwrite a newer one. */
async function settle(ctx: ToolContext, claimed: DocumentDoc, set: Partial<DocumentDoc>): Promise<DocumentDoc> {
  const done = await documents(ctx.db).findOneAndUpdate(
    { _id: claimed._id, workspace: ctx.workspace, status: 'processing', processing_at: claimed.processing_at },
    { $set: { ...set, updated_at: ctx.now } }, { returnDocument: 'after' },
  ).lean();
  if (!done) throw new CuadraError('conflict', `Document ${claimed._id} was taken over by another process; read it again.`);
  return done;
}

function invoiceSummary(inv: UblInvoice): DocumentInvoice {
  return { number: inv.number, cufe: inv.cufe, supplier_nit: inv.supplier_nit, supplier_name: inv.supplier_name, issue_date: inv.issue_date, currency: inv.currency, payable: inv.totals.payable };
}

/**
 * Processes a document: uploaded (or failed, to try again) → processing → processed | failed, each
 * step one conditional update. A processed or failed document answers as it is unless `retry`;
 * one being processed is a conflict (a claim older than a minute is taken over). The draft bill
 * is written under the id the document chose at upload, so a crash after the bill and before the
 * document's last step ends in processed on the next try, never in a second bill.
 */
export async function processDocument(ctx: ToolContext, id: string, options: { technicalKey?: string; retry?: boolean } = {}): Promise<DocumentDoc> {
  const model = documents(ctx.db);
  const from: DocumentStatus[] = options.retry ? ['uploaded', 'failed'] : ['uploaded'];
  const claimed = await model.findOneAndUpdate(
    { _id: id, workspace: ctx.workspace, $or: [{ status: { $in: from } }, { status: 'processing', processing_at: { $lt: new Date(ctx.now.getTime() - REPAIR_AFTER_MS) } }] },
    { $set: { status: 'processing', processing_at: ctx.now, reason: null, updated_at: ctx.now } }, { returnDocument: 'after' },
  ).lean() as DocumentDoc | null;
  if (!claimed) {
    const doc = await model.findOne({ _id: id, workspace: ctx.workspace }).lean();
    if (!doc) throw new CuadraError('not_found', `No document ${id} exists in this workspace.`);
    if (doc.status === 'processing') throw new CuadraError('conflict', `Document ${id} is being processed; read it again in a moment.`);
    return doc;
  }
  const fail = (reason: string) => settle(ctx, claimed, { status: 'failed', reason });
  if (await bills(ctx.db).exists({ _id: claimed.bill_id, workspace: ctx.workspace })) return settle(ctx, claimed, { status: 'processed', processed_bill: claimed.bill_id });
  if (claimed.kind !== 'xml') return fail(`A ${claimed.content_type} file cannot be read as an e-invoice; upload the supplier's XML (AttachedDocument or UBL Invoice).`);

  let inv: UblInvoice;
  try {
    inv = readSupplierInvoice(claimed.content.toString('utf8'));
  } catch (err) {
    if (err instanceof DocumentProblem) return fail(err.message);
    throw await release(ctx, claimed, err);
  }
  // What was read is kept even when a check below fails: the person sees which invoice it was.
  const summary = invoiceSummary(inv);
  const read = { invoice: summary, search_lc: documentSearchText(claimed.name, summary) };
  let input: Omit<BillCreateInput, 'vendor_id'>;
  try {
    input = billFromInvoice(inv, claimed.line_account as BillLineAccount, options.technicalKey);
  } catch (err) {
    if (err instanceof DocumentProblem || (err instanceof CuadraError && err.code === 'invalid_input')) return settle(ctx, claimed, { status: 'failed', reason: (err as Error).message, ...read });
    throw await release(ctx, claimed, err);
  }
  try {
    const party = await partyByNit(ctx, inv.supplier_nit);
    if (!party) {
      return settle(ctx, claimed, {
        status: 'failed', ...read, supplier_pending: supplierOf(inv),
        reason: `supplier ${inv.supplier_nit} is not a party yet: create ${inv.supplier_name} (NIT ${inv.supplier_nit}) from this document with parties.create_from_document (crm reads it from here), or add it to crm as a vendor, then process the document again.`,
      });
    }
    await createDraftBill(ctx, { ...input, vendor_id: party.id }, claimed.bill_id);
  } catch (err) {
    if (err instanceof CuadraError && (err.code === 'invalid_input' || err.code === 'conflict')) return settle(ctx, claimed, { status: 'failed', reason: err.message, ...read });
    throw await release(ctx, claimed, err);
  }
  return settle(ctx, claimed, { status: 'processed', processed_bill: claimed.bill_id, supplier_pending: null, ...read });
}

/** The supplier as the invoice names it (NIT digits, check digit when given, name, e-mail). */
function supplierOf(inv: UblInvoice): SupplierPending {
  const dv = inv.supplier_check_digit !== null && /^\d$/.test(inv.supplier_check_digit) ? Number(inv.supplier_check_digit) : null;
  return { tax_id: { type: 'NIT', number: inv.supplier_nit, check_digit: dv }, name: inv.supplier_name.slice(0, 200), email: inv.supplier_email?.slice(0, 254) ?? null };
}

/** Gives a claim back (crm not answering, say): the document returns to uploaded so it can be processed again. */
async function release(ctx: ToolContext, claimed: DocumentDoc, err: unknown): Promise<unknown> {
  await documents(ctx.db).updateOne(
    { _id: claimed._id, workspace: ctx.workspace, status: 'processing', processing_at: claimed.processing_at },
    { $set: { status: 'uploaded', processing_at: null, updated_at: ctx.now } },
  ).catch(() => undefined);
  return err;
}
