import { CuadraError, defineTool, newId } from '@cuadra/shared';
import { invoices, invoiceView, type InvoiceDoc, type InvoiceLine } from '../../models/invoice.ts';
import { items } from '../../models/item.ts';
import { addDays, lineAmounts, localDate, VAT_RATES_BPS } from '../../money.ts';

interface LineInput { item_id?: string; description?: string; quantity: number; unit_price?: number; discount_bps?: number; tax_rate_bps?: number }
interface Input { customer_id: string; currency: string; issue_date?: string; due_date?: string; lines: LineInput[]; notes?: string }

/** Creates a draft invoice; amounts are computed here, never taken from the caller. */
export const create = defineTool<Input>({
  name: 'invoices.create',
  description: 'Create a draft sales invoice for a customer: lines (from catalog items or free text) with quantity, unit price in cents, discount and VAT; totals are computed. Posting assigns the number.',
  risk: 'write',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['customer_id', 'currency', 'lines'],
    properties: {
      customer_id: { type: 'string', pattern: '^pty_[A-Za-z0-9_-]{1,40}$' },
      currency: { type: 'string', pattern: '^[A-Z]{3}$' },
      issue_date: { type: 'string', format: 'date' },
      due_date: { type: 'string', format: 'date' },
      notes: { type: 'string', maxLength: 2000 },
      lines: {
        type: 'array',
        minItems: 1,
        maxItems: 500,
        items: {
          type: 'object',
          additionalProperties: false,
          required: ['quantity'],
          properties: {
            item_id: { type: 'string', pattern: '^itm_[A-Za-z0-9_-]{1,40}$' },
            description: { type: 'string', minLength: 1, maxLength: 500 },
            quantity: { type: 'number', exclusiveMinimum: 0, maximum: 1e9 },
            unit_price: { type: 'integer', minimum: 0, maximum: 1e15 },
            discount_bps: { type: 'integer', minimum: 0, maximum: 10000 },
            tax_rate_bps: { enum: [...VAT_RATES_BPS] },
          },
        },
      },
    },
  },
  async handler(input, ctx) {
    const itemIds = [...new Set(input.lines.flatMap((l) => (l.item_id ? [l.item_id] : [])))];
    const found = itemIds.length ? await items(ctx.db).find({ _id: { $in: itemIds }, workspace: ctx.workspace }).lean() : [];
    const byId = new Map(found.map((i) => [i._id, i]));
    const lines: InvoiceLine[] = input.lines.map((l, index) => {
      const item = l.item_id ? byId.get(l.item_id) : undefined;
      if (l.item_id && !item) throw new CuadraError('not_found', `No item ${l.item_id} exists in this workspace (line ${index}).`);
      if (item && item.currency !== input.currency) {
        throw new CuadraError('invalid_input', `Item ${item._id} is priced in ${item.currency}, not ${input.currency}.`, { field: `/lines/${index}/item_id` });
      }
      const description = l.description ?? item?.name;
      if (!description) throw new CuadraError('invalid_input', 'A line without an item needs a description.', { field: `/lines/${index}/description` });
      const unitPrice = l.unit_price ?? item?.price;
      if (unitPrice === undefined) throw new CuadraError('invalid_input', 'A line without an item needs a unit_price.', { field: `/lines/${index}/unit_price` });
      const discount = l.discount_bps ?? 0;
      const rate = l.tax_rate_bps ?? item?.tax_rate_bps ?? 1900;
      return { item_id: item?._id ?? null, description, quantity: l.quantity, unit_price: unitPrice, discount_bps: discount, tax_rate_bps: rate, ...lineAmounts(l.quantity, unitPrice, discount, rate) };
    });
    const issueDate = input.issue_date ?? localDate(ctx.now);
    const dueDate = input.due_date ?? addDays(issueDate, 30);
    if (dueDate < issueDate) throw new CuadraError('invalid_input', 'The due date cannot be before the issue date.', { field: '/due_date' });
    const subtotal = lines.reduce((s, l) => s + l.subtotal, 0);
    const taxTotal = lines.reduce((s, l) => s + l.tax, 0);
    const doc: InvoiceDoc = {
      _id: newId('inv'), workspace: ctx.workspace, kind: 'invoice', status: 'draft', number: null, customer_id: input.customer_id,
      currency: input.currency, issue_date: issueDate, due_date: dueDate, lines, subtotal, tax_total: taxTotal, total: subtotal + taxTotal,
      notes: input.notes ?? null, created_at: ctx.now, updated_at: ctx.now,
    };
    await invoices(ctx.db).create(doc);
    return { invoice: invoiceView(doc) };
  },
});
