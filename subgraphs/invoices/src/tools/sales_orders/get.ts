import { CuadraError, defineTool } from '@cuadra/shared';
import { salesDocuments, salesDocumentView } from '../../models/sales-document.ts';

/** Reads one sales order. */
export const get = defineTool<{ id: string }>({
  name: 'sales_orders.get',
  description: 'Get one sales order by id: customer, lines, totals, status and what it was converted into.',
  risk: 'read',
  input: { type: 'object', additionalProperties: false, required: ['id'], properties: { id: { type: 'string', minLength: 1, maxLength: 64 } } },
  async handler(input, ctx) {
    const doc = await salesDocuments(ctx.db).findOne({ _id: input.id, workspace: ctx.workspace, kind: 'sales_order' }).lean();
    if (!doc) throw new CuadraError('not_found', `No sales order ${input.id} exists in this workspace.`);
    return { sales_order: salesDocumentView(doc) };
  },
});
