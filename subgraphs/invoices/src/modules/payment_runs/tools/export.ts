import { CuadraError, defineTool, ID_SCHEMA, TEXT_SCHEMA } from '@cuadra/shared';
import { bankFile, PAYMENT_FORMAT_IDS } from '../formats.ts';
import { PAYMENT_RUN_VIEW_SCHEMA, paymentRunView } from '../model.ts';
import { findRun, transitionRun } from '../ops.ts';

/**
 * Produces an approved run's bank file. The first export moves the run approved → exported and
 * fixes the file's creation time; later exports (another format, or the same again) answer files
 * built from the same stored run, byte for byte the same for one format.
 */
export const exportRun = defineTool({
  name: 'payment_runs.export',
  description: 'Produce the bank file of an approved payment run in a format of payment_formats: "pain.001.001.03" (ISO 20022 XML) or "bancolombia_pab" (Bancolombia\'s fixed-width pago a proveedores file, COP only). The run becomes exported; export again to get the same file. Upload it to the bank, then confirm the run once the bank has paid.',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['id', 'format'],
    properties: { id: ID_SCHEMA, format: { enum: PAYMENT_FORMAT_IDS } },
  },
  output: {
    type: 'object', additionalProperties: false, required: ['payment_run', 'file'],
    properties: {
      payment_run: PAYMENT_RUN_VIEW_SCHEMA,
      file: {
        type: 'object', additionalProperties: false, required: ['format', 'filename', 'media_type', 'content', 'transactions', 'control_sum'],
        properties: {
          format: { enum: PAYMENT_FORMAT_IDS }, filename: TEXT_SCHEMA, media_type: TEXT_SCHEMA, content: TEXT_SCHEMA,
          transactions: { type: 'integer', minimum: 1 }, control_sum: { type: 'string', pattern: '^\\d+\\.\\d{2}$' },
        },
      },
    },
  },
  async handler(input, ctx) {
    let run = await findRun(ctx, input.id);
    if (run.status !== 'approved' && run.status !== 'exported') {
      throw new CuadraError('conflict', run.status === 'draft' ? `Payment run ${run._id} is not approved yet.` : `Payment run ${run._id} is ${run.status}; only approved or exported runs are exported.`);
    }
    // Built before the status changes: a format that cannot carry this run changes nothing.
    bankFile({ ...run, exported_at: run.exported_at ?? ctx.now }, input.format);
    const entry = { format: input.format, at: ctx.now };
    run = run.status === 'approved'
      ? await transitionRun(ctx, run._id, ['approved'], 'exported', { exported_at: ctx.now }, {}, { exports: entry })
      : await transitionRun(ctx, run._id, ['exported'], 'exported', {}, {}, { exports: entry });
    return { payment_run: paymentRunView(run), file: bankFile(run, input.format) };
  },
});
