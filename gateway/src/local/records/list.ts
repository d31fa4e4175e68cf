import { defineTool } from '@cuadra/shared';
import { listRecords, RECORDS_ANSWER_SCHEMA } from '../../canvas/routes.ts';
import { recordsListInputSchema } from '../../canvas/schema.ts';
import { readGatewaySource } from '../reads.ts';
import { canvasServices } from '../services.ts';

/** The composite records read: fans out to the module that owns the source (CONTRACT.md §8). */
export const list = defineTool({
  name: 'records.list',
  description: 'List rows of one records source (specification §2.5; answered today: {sources}) with limit, search, kind, status, ref and cursor: {source, rows, total?, next_cursor?}, newest first. ' +
    'Pages: pass next_cursor back as cursor until it is absent; a filtered page may be short, even empty, and still carry next_cursor; ' +
    'total is given where a count is kept on write (unfiltered lists). A source no module answers yet is refused with not_found.',
  risk: 'read',
  input: recordsListInputSchema,
  output: RECORDS_ANSWER_SCHEMA,
  async handler(input, ctx) {
    const services = canvasServices(ctx);
    return listRecords(services.graph, (principal, query) => readGatewaySource(services, principal, query), ctx.principal, input);
  },
});
