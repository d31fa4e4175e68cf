import { CuadraError, defineTool } from '@cuadra/shared';
import { salesDocuments, salesDocumentView } from '../../models/sales-document.ts';

/** Reads one quote. */
export const get = defineTool<{ id: string }>({
  name: 'quotes.get',
  description: 'Get one quote by id: customer, lines, totals, status and what it was converted into.',
  risk: 'read',
  input: { type: 'object', additionalProperties: false, required: ['id'], properties: { id: { type: 'string', minLength: 1, maxLength: 64 } } },
  async handler(input, ctx) {
    const doc = await salesDocuments(ctx.db).findOne({ _id: input.id, workspace: ctx.workspace, kind: 'quote' }).lean();
    if (!doc) throw new CuadraError('not_found', `No quote ${input.id} exists in this workspace.`);
    return { quote: salesDocumentView(doc) };
  },
});
