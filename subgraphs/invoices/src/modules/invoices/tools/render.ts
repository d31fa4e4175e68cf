import { CuadraError, defineTool, ID_SCHEMA } from '@cuadra/shared';
import { authorityXml } from '../../../e-documents/signed.ts';
import { qrContent, qrPng } from '../../../e-documents/qr.ts';
import { xmlEscape as h } from '../../../e-documents/xml.ts';
import type { Connection } from 'mongoose';
import { invoices, referencedInvoiceId, type InvoiceDoc } from '../model.ts';
import { openSettings, rangeOf, settings, type VisibleSettings } from '../../../lib/settings.ts';
import { decimalAmount, decimalQuantity, percentFromPpm } from '../../../lib/money.ts';
import { FISCAL_RESPONSIBILITIES, municipality, PAYMENT_MEANS } from '@cuadra/shared/dian';
import { lineParts } from '../../../lib/line-model.ts';
import { paymentOf } from '../../../lib/payment.ts';
import { softwareMaker } from '../../../lib/settings.ts';

function money(cents: number, currency: string): string {
  const [whole, frac] = decimalAmount(cents).split('.');
  return `${currency} ${whole.replace(/\B(?=(\d{3})+(?!\d))/g, '.')},${frac}`;
}

/** A percentage as the representation prints it (19 %, 2,5 %). */
function pct(ppm: number): string {
  return `${percentFromPpm(ppm, 0).replace('.', ',')} %`;
}

/** A percentage in basis points (10 % = 1000). */
function pctBps(bps: number): string {
  return `${String(bps / 100).replace('.', ',')} %`;
}

/** The numbering resolution printed on the document (DIAN requires it on the graphic representation). */
function resolutionLine(doc: InvoiceDoc, s: VisibleSettings | null): string {
  if (!s || doc.kind !== 'invoice') return '';
  const r = rangeOf(s.numbering, doc.kind);
  const validity = r.valid_from && r.valid_to ? `, vigente del ${h(r.valid_from)} al ${h(r.valid_to)}` : r.valid_to ? `, vigente hasta ${h(r.valid_to)}` : '';
  if (!r.resolution) return `<p>Numeración ${h(r.prefix)}${r.from} a ${h(r.prefix)}${r.to}</p>`;
  return `<p>Resolución DIAN de facturación N.º ${h(r.resolution)}, numeración ${h(r.prefix)}${r.from} a ${h(r.prefix)}${r.to}${validity}</p>`;
}

/** Taxes by rate (and, outside Colombia, category): base and amount, as the representation lists them. */
function taxRows(doc: InvoiceDoc, dian: boolean): string {
  const byRate = new Map<string, { label: string; base: number; tax: number; rate: number }>();
  const add = (label: string, rate: number, base: number, tax: number) => {
    const t = byRate.get(label) ?? { label, base: 0, tax: 0, rate };
    t.base += base;
    t.tax += tax;
    byRate.set(label, t);
  };
  for (const l of doc.lines) add(dian ? `IVA ${pct(l.tax_rate_ppm)}` : `IVA ${pct(l.tax_rate_ppm)}${l.vat && l.vat.category !== 'S' ? ` (${l.vat.category})` : ''}`, l.tax_rate_ppm, l.subtotal, l.tax);
  for (const a of doc.allowance_charges ?? []) if (!dian) add(`IVA ${pct(a.tax_rate_ppm)}${a.vat && a.vat.category !== 'S' ? ` (${a.vat.category})` : ''}`, a.tax_rate_ppm, a.charge ? a.amount : -a.amount, a.charge ? a.tax : -a.tax);
  return [...byRate.values()].sort((a, b) => b.rate - a.rate).map((t) => `<tr><td colspan="7">${h(t.label)} sobre ${h(money(t.base, doc.currency))}</td><td class="n">${h(money(t.tax, doc.currency))}</td></tr>`).join('');
}

/** The issuer's fiscal responsibilities and tax as the representation states them (Estatuto Tributario art. 617: the quality of withholding agent). */
function issuerQualities(s: VisibleSettings): string {
  const names = (s.issuer.responsibilities ?? []).filter((r) => r !== 'R-99-PN').map((r) => FISCAL_RESPONSIBILITIES[r] ?? r);
  const scheme = s.issuer.tax_scheme ?? '01';
  const tax = scheme === '01' || scheme === 'ZA' ? 'Responsable de IVA' : 'No responsable de IVA';
  return [tax, ...names].join(' · ');
}

/** An address as printed: line, municipality and department (DANE's names), country. */
function addressText(a: { line: string; municipality_code: string | null; postal_code: string | null; country: string } | null | undefined): string {
  if (!a) return '';
  const m = a.municipality_code ? municipality(a.municipality_code) : null;
  return [a.line, m ? `${m.name}, ${m.department}` : null, a.postal_code, a.country === 'CO' ? 'Colombia' : a.country].filter(Boolean).join(' — ');
}

/** Units as a person reads them (UN/ECE Rec. 20 codes the catalog uses); another code is printed as it is. */
const UNIT: Record<string, string> = { '94': 'und', C62: 'und', HUR: 'h', DAY: 'día', MON: 'mes', KGM: 'kg', GRM: 'g', MTR: 'm', LTR: 'l', MTK: 'm²', MTQ: 'm³' };

/** Statuses as a person reads them, in Spanish. */
const STATUS: Record<InvoiceDoc['status'], string> = { draft: 'Borrador', posted: 'Emitida', partially_paid: 'Pagada parcialmente', paid: 'Pagada', cancelled: 'Anulada' };

/** The withholdings' names (Colombian taxes). */
const WITHHOLDING_NAME: Record<string, string> = { retefuente: 'Retención en la fuente', reteiva: 'ReteIVA', reteica: 'ReteICA' };

/** What only a posted document's representation carries: its QR code and, for a note, the invoice it refers to. */
export interface RepresentationExtras {
  /** The QR code (qr.ts) as a `data:image/png;base64,` URI. */
  qrDataUri?: string | null;
  credited?: Pick<InvoiceDoc, 'number' | 'cufe' | 'issue_date'> | null;
}

/**
 * A printable HTML page of the document (printed to PDF by invoices.pdf), every value escaped. For
 * a Colombian document it holds what Resolución 000165 de 2023 (art. 11) and the Estatuto
 * Tributario (art. 617) ask of the graphic representation of an electronic invoice: the
 * denomination and number with DIAN's numbering resolution; the issuer's name, NIT, fiscal
 * responsibilities (its quality of withholding agent), address and contact; the buyer's name,
 * identification and address; date and time of issue and the due date; the form and means of
 * payment; each line's quantity, unit, price, discount and charges, VAT and value; the document's
 * discounts and charges; taxes by rate, withholdings, total and what is payable; the CUFE/CUDE and
 * its QR code; the software and who made it (name, NIT). Statuses read in Spanish.
 */
export function renderHtml(doc: InvoiceDoc, s: VisibleSettings | null, extras: RepresentationExtras = {}): string {
  const dian = doc.cufe !== null || s !== null;
  const title = dian
    ? { invoice: 'Factura electrónica de venta', credit_note: 'Nota crédito electrónica', debit_note: 'Nota débito electrónica' }[doc.kind]
    : { invoice: 'Factura', credit_note: 'Nota crédito', debit_note: 'Nota débito' }[doc.kind];
  const keyName = doc.kind === 'invoice' ? 'CUFE' : 'CUDE';
  const docName = { invoice: 'factura', credit_note: 'nota crédito', debit_note: 'nota débito' }[doc.kind];
  const cur = doc.currency;
  const rows = doc.lines.map((l, i) => {
    const parts = lineParts(l).allowance_charges;
    const discount = parts.filter((a) => !a.charge);
    const charges = parts.filter((a) => a.charge);
    const disc = discount.length ? discount.map((a) => `${pctBps(a.rate_bps)} (−${h(money(a.amount, cur))})`).join(' ') : '—';
    const extra = charges.length ? `<br><span class="small">${charges.map((a) => `Cargo ${h(a.reason)} ${pctBps(a.rate_bps)}: +${h(money(a.amount, cur))}`).join('<br>')}</span>` : '';
    return `<tr><td>${i + 1}</td><td>${h(l.description)}${extra}</td><td class="n">${decimalQuantity(l.quantity).replace('.', ',')} ${h(UNIT[l.unit] ?? l.unit)}</td><td class="n">${h(money(l.unit_price, cur))}</td><td class="n">${disc}</td><td class="n">${pct(l.tax_rate_ppm)}</td><td class="n">${h(money(l.tax, cur))}</td><td class="n">${h(money(l.subtotal, cur))}</td></tr>`;
  }).join('');
  const acs = (doc.allowance_charges ?? []).map((a) => `<tr><td colspan="7">${a.charge ? 'Cargo' : 'Descuento'}: ${h(a.reason)}${a.rate_bps !== null ? ` (${pctBps(a.rate_bps)})` : ''}</td><td class="n">${a.charge ? '' : '−'}${h(money(a.amount, cur))}</td></tr>`).join('');
  const withholdings = doc.withholdings.map((w) => `<tr><td colspan="7">${h(WITHHOLDING_NAME[w.type] ?? w.type)} ${percentFromPpm(w.rate_ppm, 2).replace('.', ',')} % sobre ${h(money(w.base, cur))}</td><td class="n">−${h(money(w.amount, cur))}</td></tr>`).join('');
  const payment = doc.kind === 'credit_note' ? null : paymentOf(doc, s);
  const buyer = doc.customer;
  const maker = s ? softwareMaker(s) : null;
  return `<!doctype html><html lang="es"><head><meta charset="utf-8"><title>${h(title)} ${h(doc.number ?? 'borrador')}</title>
<style>body{font:13px system-ui,sans-serif;margin:2rem;color:#111}table{width:100%;border-collapse:collapse}td,th{border-bottom:1px solid #ddd;padding:.3rem;vertical-align:top}.n{text-align:right;white-space:nowrap}.key{font:11px monospace;word-break:break-all}.qr{width:160px;height:160px;image-rendering:pixelated}.legal,.small{font-size:11px}@media print{body{margin:0}}</style></head>
<body><h1>${h(title)} ${h(doc.number ?? '(borrador)')}</h1>
${s ? `<p><strong>${h(s.issuer.name)}</strong> NIT ${h(`${s.issuer.nit}-${s.issuer.check_digit}`)}${s.issuer.legal_name && s.issuer.legal_name !== s.issuer.name ? ` · Razón social: ${h(s.issuer.legal_name)}` : ''}<br><span class="small">${h(issuerQualities(s))}${s.issuer.address ? ` · ${h(addressText(s.issuer.address))}` : ''}${s.issuer.email ? ` · ${h(s.issuer.email)}` : ''}${s.issuer.phone ? ` · Tel. ${h(s.issuer.phone)}` : ''}</span></p>` : ''}
<p>Cliente: <strong>${h(buyer.name)}</strong>${buyer.tax_id ? ` — ${h(buyer.tax_id.type)} ${h(buyer.tax_id.number)}${buyer.tax_id.check_digit === null ? '' : `-${buyer.tax_id.check_digit}`}` : ' — Consumidor final'}${buyer.fiscal?.legal_name && buyer.fiscal.legal_name !== buyer.name ? ` · Razón social: ${h(buyer.fiscal.legal_name)}` : ''}${buyer.fiscal?.address ? `<br><span class="small">${h(addressText(buyer.fiscal.address))}</span>` : ''}${buyer.email ? `<br><span class="small">${h(buyer.email)}</span>` : ''}</p>
${resolutionLine(doc, s)}
${extras.credited ? `<p>${doc.kind === 'debit_note' ? 'Nota débito' : 'Nota crédito'} a la factura ${h(extras.credited.number ?? '')} del ${h(extras.credited.issue_date)}${extras.credited.cufe ? ` (CUFE ${h(extras.credited.cufe)})` : ''}</p>` : ''}
<p>Fecha y hora de expedición: ${h(doc.issue_date)} ${h(doc.issue_time ?? '')} · Vence: ${h(doc.due_date)} · Estado: ${h(STATUS[doc.status])}</p>
${payment ? `<p>Forma de pago: ${payment.form === '2' ? `Crédito (vence ${h(doc.due_date)})` : 'Contado'} · Medio de pago: ${h(PAYMENT_MEANS[payment.means] ?? payment.means)}</p>` : ''}
<table><thead><tr><th>#</th><th>Descripción</th><th class="n">Cant.</th><th class="n">Precio unitario</th><th class="n">Descuento</th><th class="n">IVA</th><th class="n">Valor IVA</th><th class="n">Valor</th></tr></thead><tbody>${rows}</tbody>
<tfoot><tr><td colspan="7">Subtotal (valor bruto)</td><td class="n">${h(money(doc.subtotal, cur))}</td></tr>${acs}${taxRows(doc, dian)}<tr><td colspan="7">Total IVA</td><td class="n">${h(money(doc.tax_total, cur))}</td></tr>
<tr><td colspan="7"><strong>Total</strong></td><td class="n"><strong>${h(money(doc.total, cur))}</strong></td></tr>${withholdings}
<tr><td colspan="7">A pagar</td><td class="n">${h(money(doc.amount_due, cur))}</td></tr></tfoot></table>
${doc.cufe ? `<p>${keyName}: <span class="key">${h(doc.cufe)}</span></p>` : ''}
${extras.qrDataUri ? `<p><img class="qr" alt="Código QR del documento" src="${h(extras.qrDataUri)}"></p>` : ''}
${doc.cufe ? `<p class="legal">Representación gráfica de la ${docName} electrónica. Consúltela en el catálogo de la DIAN con su ${keyName}.</p>` : ''}
${maker ? `<p class="legal">Software: ${h(s?.software_name ?? 'Cuadra')} — fabricante ${h(maker.name)}, NIT ${h(`${maker.nit}-${maker.check_digit}`)}</p>` : ''}
${doc.notes ? `<p>${h(doc.notes)}</p>` : ''}</body></html>`;
}

/** The HTML of a document with everything a posted one carries (QR code, the invoice a note refers to). */
export async function representationHtml(db: Connection, doc: InvoiceDoc, s: VisibleSettings | null): Promise<string> {
  const credited = referencedInvoiceId(doc) ? await invoices(db).findOne({ _id: referencedInvoiceId(doc)!, workspace: doc.workspace }).lean() : null;
  if (doc.status === 'draft' || !s || !doc.cufe) return renderHtml(doc, s, { credited });
  const png = await qrPng(qrContent(doc, s));
  return renderHtml(doc, s, { qrDataUri: `data:image/png;base64,${png.toString('base64')}`, credited });
}

/** Renders an invoice as printable HTML, or (posted only) as its UBL 2.1 XML. */
export const render = defineTool({
  name: 'invoices.render',
  description: 'Render an invoice or credit note as a printable HTML page (print to PDF from a browser) or, once posted, as the UBL 2.1 XML sent to DIAN.',
  risk: 'read',
  input: {
    type: 'object', additionalProperties: false, required: ['id'],
    properties: { id: ID_SCHEMA, format: { enum: ['html', 'ubl'] } },
  },
  output: {
    type: 'object', additionalProperties: false, required: ['format', 'content_type', 'content'],
    properties: {
      format: { enum: ['html', 'ubl'] },
      content_type: { enum: ['text/html; charset=utf-8', 'application/xml'] },
      content: { type: 'string' },
    },
  },
  async handler(input, ctx) {
    const doc = await invoices(ctx.db).findOne({ _id: input.id, workspace: ctx.workspace }).lean();
    if (!doc) throw new CuadraError('not_found', `No invoice ${input.id} exists in this workspace.`);
    const s = await settings(ctx.db).findById(ctx.workspace).lean();
    if ((input.format ?? 'html') === 'html') return { format: 'html', content_type: 'text/html; charset=utf-8', content: await representationHtml(ctx.db, doc, s) };
    if (doc.status === 'draft' || !s) throw new CuadraError('conflict', 'Only a posted document has a UBL form.');
    const credited = referencedInvoiceId(doc) ? await invoices(ctx.db).findOne({ _id: referencedInvoiceId(doc)!, workspace: ctx.workspace }).lean() : null;
    return { format: 'ubl', content_type: 'application/xml', content: await authorityXml(ctx.db, ctx.workspace, doc, openSettings(s), credited, ctx.now, { store: false }) };
  },
});
