import { CURSOR_SCHEMA, defineTool, listNewestFirst, pageOutput } from '@cuadra/shared';
import { PAYMENT_VIEW_SCHEMA, payments, paymentView, type PaymentDoc } from '../model.ts';

interface Input { customer_id?: string; limit?: number; cursor?: string }

/** Lists payments received, newest first. */
export const list = defineTool<Input>({
  name: 'payments.list',
  description: 'List payments received, newest first; filter by customer.' +
    ' Pages: pass next_cursor back as cursor until it is absent; a filtered page may be short, even empty, and still carry next_cursor; total is given only without filters.',
  risk: 'read',
  input: {
    type: 'object', additionalProperties: false,
    properties: {
      customer_id: { type: 'string', minLength: 1, maxLength: 64 },
      limit: { type: 'integer', minimum: 1, maximum: 100 },
      cursor: CURSOR_SCHEMA,
    },
  },
  output: pageOutput(PAYMENT_VIEW_SCHEMA),
  async handler(input, ctx) {
    const match = input.customer_id ? (p: PaymentDoc) => p.customer_id === input.customer_id : undefined;
    return listNewestFirst<PaymentDoc, ReturnType<typeof paymentView>>(payments(ctx.db), { workspace: ctx.workspace, cursor: input.cursor, limit: input.limit ?? 20, match }, paymentView);
  },
});
