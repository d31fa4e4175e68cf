import { CuadraError, defineTool, ID_SCHEMA } from '@cuadra/shared';
import { authorityXml } from '../../../einvoicing/signed.ts';
import { qrContent, qrPng } from '../../../einvoicing/qr.ts';
import { xmlEscape as h } from '../../../einvoicing/xml.ts';
import type { Connection } from 'mongoose';
import { invoices, referencedInvoiceId, type InvoiceDoc } from '../model.ts';
import { openSettings, rangeOf, settings, type VisibleSettings } from '../../../lib/settings.ts';
import { decimalAmount, decimalQuantity, percentFromPpm } from '../../../lib/money.ts';

function money(cents: number, currency: string): string {
  const [whole, frac] = decimalAmount(cents).split('.');
  return `${currency} ${whole.replace(/\B(?=(\d{3})+(?!\d))/g, '.')},${frac}`;
}

/** The numbering resolution printed on the document (DIAN requires it on the graphic representation). */
function resolutionLine(doc: InvoiceDoc, s: VisibleSettings | null): string {
  if (!s) return '';
  const r = rangeOf(s.numbering, doc.kind);
  if (!r.resolution) return `<p>Numeración ${h(r.prefix)}${r.from} a ${h(r.prefix)}${r.to}</p>`;
  return `<p>Resolución DIAN de facturación N.º ${h(r.resolution)}, numeración ${h(r.prefix)}${r.from} a ${h(r.prefix)}${r.to}${r.valid_to ? `, vigente hasta ${h(r.valid_to)}` : ''}</p>`;
}

/** Taxes by rate: base and amount (IVA 19 %, 5 %, 0 %), as the representation lists them. */
function taxRows(doc: InvoiceDoc): string {
  const byRate = new Map<number, { base: number; tax: number }>();
  for (const l of doc.lines) {
    const t = byRate.get(l.tax_rate_ppm) ?? { base: 0, tax: 0 };
    t.base += l.subtotal;
    t.tax += l.tax;
    byRate.set(l.tax_rate_ppm, t);
  }
  return [...byRate.entries()].sort((a, b) => b[0] - a[0]).map(([rate, t]) => `<tr><td colspan="5">IVA ${percentFromPpm(rate, 0).replace('.', ',')} % sobre ${h(money(t.base, doc.currency))}</td><td class="n">${h(money(t.tax, doc.currency))}</td></tr>`).join('');
}

/** What only a posted document's representation carries: its QR code and, for a credit note, the invoice it credits. */
export interface RepresentationExtras {
  /** The QR code (qr.ts) as a `data:image/png;base64,` URI. */
  qrDataUri?: string | null;
  credited?: Pick<InvoiceDoc, 'number' | 'cufe' | 'issue_date'> | null;
}

/** A printable HTML page of the document (printed to PDF by invoices.pdf), every value escaped. */
export function renderHtml(doc: InvoiceDoc, s: VisibleSettings | null, extras: RepresentationExtras = {}): string {
  const title = { invoice: 'Factura electrónica de venta', credit_note: 'Nota crédito electrónica', debit_note: 'Nota débito electrónica' }[doc.kind];
  const keyName = doc.kind === 'invoice' ? 'CUFE' : 'CUDE';
  const docName = { invoice: 'factura', credit_note: 'nota crédito', debit_note: 'nota débito' }[doc.kind];
  const rows = doc.lines.map((l, i) => `<tr><td>${i + 1}</td><td>${h(l.description)}</td><td class="n">${decimalQuantity(l.quantity).replace('.', ',')}</td><td class="n">${h(money(l.unit_price, doc.currency))}</td><td class="n">${percentFromPpm(l.tax_rate_ppm, 0).replace('.', ',')} %</td><td class="n">${h(money(l.subtotal, doc.currency))}</td></tr>`).join('');
  const withholdings = doc.withholdings.map((w) => `<tr><td colspan="5">${h(w.type)} ${percentFromPpm(w.rate_ppm, 2).replace('.', ',')} %</td><td class="n">−${h(money(w.amount, doc.currency))}</td></tr>`).join('');
  return `<!doctype html><html lang="es"><head><meta charset="utf-8"><title>${h(title)} ${h(doc.number ?? 'borrador')}</title>
<style>body{font:14px system-ui,sans-serif;margin:2rem;color:#111}table{width:100%;border-collapse:collapse}td,th{border-bottom:1px solid #ddd;padding:.3rem}.n{text-align:right}.key{font:11px monospace;word-break:break-all}.qr{width:160px;height:160px;image-rendering:pixelated}.legal{font-size:11px}@media print{body{margin:0}}</style></head>
<body><h1>${h(title)} ${h(doc.number ?? '(borrador)')}</h1>
<p><strong>${h(s?.issuer.name ?? '')}</strong> NIT ${h(s ? `${s.issuer.nit}-${s.issuer.check_digit}` : '')}</p>
<p>Cliente: <strong>${h(doc.customer.name)}</strong>${doc.customer.tax_id ? ` — ${h(doc.customer.tax_id.type)} ${h(doc.customer.tax_id.number)}${doc.customer.tax_id.check_digit === null ? '' : `-${doc.customer.tax_id.check_digit}`}` : ''}</p>
${resolutionLine(doc, s)}
${extras.credited ? `<p>${doc.kind === 'debit_note' ? 'Nota débito' : 'Nota crédito'} a la factura ${h(extras.credited.number ?? '')} del ${h(extras.credited.issue_date)} (CUFE ${h(extras.credited.cufe ?? '')})</p>` : ''}
<p>Fecha: ${h(doc.issue_date)} ${h(doc.issue_time ?? '')} · Vence: ${h(doc.due_date)} · Estado: ${h(doc.status)}</p>
<table><thead><tr><th>#</th><th>Descripción</th><th class="n">Cant.</th><th class="n">Precio</th><th class="n">IVA</th><th class="n">Subtotal</th></tr></thead><tbody>${rows}</tbody>
<tfoot><tr><td colspan="5">Subtotal</td><td class="n">${h(money(doc.subtotal, doc.currency))}</td></tr>${taxRows(doc)}<tr><td colspan="5">Total IVA</td><td class="n">${h(money(doc.tax_total, doc.currency))}</td></tr>
<tr><td colspan="5"><strong>Total</strong></td><td class="n"><strong>${h(money(doc.total, doc.currency))}</strong></td></tr>${withholdings}
<tr><td colspan="5">A pagar</td><td class="n">${h(money(doc.amount_due, doc.currency))}</td></tr></tfoot></table>
${doc.cufe ? `<p>${keyName}: <span class="key">${h(doc.cufe)}</span></p>` : ''}
${extras.qrDataUri ? `<p><img class="qr" alt="Código QR del documento" src="${h(extras.qrDataUri)}"></p>` : ''}
${doc.cufe ? `<p class="legal">Representación gráfica de la ${docName} electrónica. Consúltela en el catálogo de la DIAN con su ${keyName}.</p>` : ''}
${doc.notes ? `<p>${h(doc.notes)}</p>` : ''}</body></html>`;
}

/** The HTML of a document with everything a posted one carries (QR code, credited invoice). */
export async function representationHtml(db: Connection, doc: InvoiceDoc, s: VisibleSettings | null): Promise<string> {
  if (doc.status === 'draft' || !s || !doc.cufe) return renderHtml(doc, s);
  const credited = referencedInvoiceId(doc) ? await invoices(db).findOne({ _id: referencedInvoiceId(doc)!, workspace: doc.workspace }).lean() : null;
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
