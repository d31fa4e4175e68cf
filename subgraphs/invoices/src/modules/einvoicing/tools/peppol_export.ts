import { CuadraError, defineTool, ID_SCHEMA } from '@cuadra/shared';
import { DEFAULT_EXEMPTION, PEPPOL_CUSTOMIZATION_ID, PEPPOL_PROFILE_ID, renderPeppol, type LineVat } from '../../../e-documents/peppol/ubl.ts';
import { peppolSettings } from '../../../e-documents/peppol/settings.ts';
import { VAT_CATEGORIES } from '../../../lib/tax-regime.ts';
import { invoices } from '../../invoices/model.ts';
import { ADDRESS_INPUT, ENDPOINT_INPUT, VAT_ID_INPUT } from './peppol_configure.ts';

const AMOUNT = { type: 'integer' } as const;

/**
 * The Peppol BIS Billing 3.0 UBL of a posted invoice (380) or credit note (381) of a workspace
 * set up with einvoicing.peppol_configure. The buyer's Peppol endpoint, address and VAT id are
 * given here (the crm party has no Peppol participant id); each line's VAT category is S when it
 * carries VAT, else the workspace's category for 0 % lines, unless `vat` names another per line.
 */
export const peppolExport = defineTool({
  name: 'einvoicing.peppol_export',
  description: 'The Peppol BIS Billing 3.0 (EN 16931) UBL 2.1 XML of a posted invoice (type 380) or credit note (type 381), for workspaces outside Colombia set up with einvoicing.peppol_configure. Give the buyer\'s Peppol endpoint (EAS scheme and id), country/address and VAT id, optionally the buyer reference and a VAT category per line (S, Z, E, AE, K, G, O with exemption reason). Answers the XML, its totals and VAT breakdown in minor units.',
  risk: 'read',
  input: {
    type: 'object', additionalProperties: false, required: ['invoice_id', 'buyer'],
    properties: {
      invoice_id: ID_SCHEMA,
      buyer: {
        type: 'object', additionalProperties: false, required: ['endpoint', 'address'],
        properties: {
          endpoint: ENDPOINT_INPUT,
          address: ADDRESS_INPUT,
          vat_id: VAT_ID_INPUT,
          legal_id: { type: 'string', pattern: '^[A-Za-z0-9.:_/ -]{1,50}$' },
          email: { type: 'string', format: 'email', maxLength: 254 },
        },
      },
      buyer_reference: { type: 'string', minLength: 1, maxLength: 100 },
      vat: {
        type: 'array', maxItems: 500,
        items: {
          type: 'object', additionalProperties: false, required: ['line', 'category'],
          properties: {
            line: { type: 'integer', minimum: 0, maximum: 499, description: 'Index of the line (0 = first).' },
            category: { enum: [...VAT_CATEGORIES] },
            reason_code: { type: 'string', pattern: '^VATEX-[A-Z0-9-]{1,30}$' },
            reason: { type: 'string', minLength: 1, maxLength: 300 },
          },
        },
      },
    },
  },
  output: {
    type: 'object', additionalProperties: false, required: ['document_type', 'customization_id', 'profile_id', 'xml', 'totals', 'vat_breakdown'],
    properties: {
      document_type: { enum: ['Invoice', 'CreditNote'] },
      customization_id: { type: 'string' },
      profile_id: { type: 'string' },
      xml: { type: 'string', contentMediaType: 'application/xml' },
      totals: {
        type: 'object', additionalProperties: false, required: ['line_extension', 'tax_exclusive', 'tax', 'tax_inclusive', 'payable'],
        properties: { line_extension: AMOUNT, tax_exclusive: AMOUNT, tax: AMOUNT, tax_inclusive: AMOUNT, payable: AMOUNT },
      },
      vat_breakdown: {
        type: 'array',
        items: {
          type: 'object', additionalProperties: false, required: ['category', 'rate_ppm', 'taxable', 'tax', 'reason_code', 'reason'],
          properties: { category: { enum: [...VAT_CATEGORIES] }, rate_ppm: { type: 'integer' }, taxable: AMOUNT, tax: AMOUNT, reason_code: { type: ['string', 'null'] }, reason: { type: ['string', 'null'] } },
        },
      },
    },
  },
  async handler(input, ctx) {
    const seller = await peppolSettings(ctx.db).findById(ctx.workspace).lean();
    if (!seller) throw new CuadraError('conflict', 'Peppol is not set up for this workspace (einvoicing.peppol_configure); a workspace outside Colombia sets it up first.');
    const doc = await invoices(ctx.db).findOne({ _id: input.invoice_id, workspace: ctx.workspace }).lean();
    if (!doc) throw new CuadraError('not_found', `No invoice ${input.invoice_id} exists in this workspace.`, { field: '/invoice_id' });
    if (doc.status === 'draft' || !doc.number) throw new CuadraError('conflict', 'Only a posted invoice or credit note has a Peppol document.');
    // Each line's category as invoiced (EN 16931 lines keep theirs); lines from before they were kept: S when taxed, else the workspace's 0 % category.
    const line_vat: LineVat[] = doc.lines.map((l) => (l.vat ? { ...l.vat } : l.tax_rate_ppm > 0
      ? { category: 'S', reason_code: null, reason: null }
      : { ...seller.zero_rate }));
    const seen = new Set<number>();
    (input.vat ?? []).forEach((v, i) => {
      if (v.line >= doc.lines.length) throw new CuadraError('invalid_input', `The document has no line ${v.line}.`, { field: `/vat/${i}/line` });
      if (seen.has(v.line)) throw new CuadraError('invalid_input', `Line ${v.line} is named twice.`, { field: `/vat/${i}/line` });
      seen.add(v.line);
      const fallback = DEFAULT_EXEMPTION[v.category];
      const given = v.reason_code || v.reason;
      line_vat[v.line] = { category: v.category, reason_code: v.reason_code ?? (given ? null : fallback?.code ?? null), reason: v.reason ?? (given ? null : fallback?.text ?? null) };
    });
    // Defaults of the workspace's 0 % category, when it has a standard reason.
    line_vat.forEach((v) => {
      if (!v.reason && !v.reason_code && DEFAULT_EXEMPTION[v.category]) Object.assign(v, { reason_code: DEFAULT_EXEMPTION[v.category]!.code, reason: DEFAULT_EXEMPTION[v.category]!.text });
    });
    const credited = doc.kind === 'credit_note' && doc.credit_of
      ? await invoices(ctx.db).findOne({ _id: doc.credit_of, workspace: ctx.workspace }, { number: 1, issue_date: 1 }).lean()
      : null;
    const vatField = (line: number) => (input.vat ?? []).findIndex((v) => v.line === line);
    try {
      const { xml, totals, breakdown } = renderPeppol(doc, seller, {
        buyer: {
          name: doc.customer.name,
          endpoint: input.buyer.endpoint,
          vat_id: input.buyer.vat_id ?? null,
          legal_id: input.buyer.legal_id ?? null,
          address: { street: input.buyer.address.street ?? null, city: input.buyer.address.city ?? null, postal_code: input.buyer.address.postal_code ?? null, country: input.buyer.address.country },
          email: input.buyer.email ?? doc.customer.email ?? null,
        },
        buyer_reference: input.buyer_reference ?? doc.number,
        line_vat,
        credited: credited?.number ? { number: credited.number, issue_date: credited.issue_date } : null,
      });
      return { document_type: doc.kind === 'credit_note' ? 'CreditNote' as const : 'Invoice' as const, customization_id: PEPPOL_CUSTOMIZATION_ID, profile_id: PEPPOL_PROFILE_ID, xml, totals, vat_breakdown: breakdown };
    } catch (err) {
      // Refusals about one line point at its entry of `vat` when the caller named it.
      if (err instanceof CuadraError && typeof err.field === 'string') {
        const m = /^\/vat\/(\d+)(\/.*)?$/.exec(err.field);
        if (m) {
          const at = vatField(Number(m[1]));
          throw new CuadraError(err.code, err.message, { field: at >= 0 ? `/vat/${at}${m[2] ?? ''}` : '/vat' });
        }
      }
      throw err;
    }
  },
});
