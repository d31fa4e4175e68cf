import { CuadraError, defineTool, ID_INPUT, recordOutput } from '@cuadra/shared';
import { RECURRING_VIEW_SCHEMA, recurringInvoices, recurringView } from '../recurring.ts';

/** Stops a schedule; invoices already made stay. */
export const recurringCancel = defineTool({
  name: 'invoices.recurring_cancel',
  description: 'Stop a recurring invoice schedule: no further periods are issued; invoices already made stay as they are.',
  risk: 'write',
  input: ID_INPUT,
  output: recordOutput('recurring', RECURRING_VIEW_SCHEMA),
  async handler(input, ctx) {
    const after = await recurringInvoices(ctx.db).findOneAndUpdate({ _id: input.id, workspace: ctx.workspace, status: 'active' }, { $set: { status: 'cancelled', updated_at: ctx.now } }, { returnDocument: 'after' }).lean();
    if (!after) {
      const doc = await recurringInvoices(ctx.db).findOne({ _id: input.id, workspace: ctx.workspace }).lean();
      if (!doc) throw new CuadraError('not_found', `No recurring schedule ${input.id} exists in this workspace.`);
      throw new CuadraError('conflict', `Schedule ${input.id} is already ${doc.status}.`);
    }
    return { recurring: recurringView(after) };
  },
});
