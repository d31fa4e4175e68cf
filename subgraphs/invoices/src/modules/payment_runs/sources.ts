import { CuadraError, defineSource, type SourceReader } from '@cuadra/shared';
import { PAYMENT_FORMATS } from './formats.ts';
import { PAYMENT_RUN_STATUSES, paymentRuns, runMatches, type PaymentRunDoc } from './model.ts';

/**
 * records.list `payment_runs`: status draft, approved, exported, confirming, confirmed or
 * cancelled; search over the run id and vendor names — the same test as payment_runs.list.
 */
export const paymentRunsSource = defineSource<PaymentRunDoc>({
  model: paymentRuns,
  search: runMatches,
  statuses: PAYMENT_RUN_STATUSES,
  row: (r) => ({
    id: r._id, status: r.status, currency: r.currency, bank_account: r.bank_account, payment_date: r.payment_date, due_by: r.due_by,
    count: r.count, total: r.total, paid_on: r.paid_on,
  }),
});

/**
 * records.list `payment_formats`: the bank file formats payment_runs.export produces, as rows. A
 * fixed list written in code (two rows), so one page always holds all of it; search over the id
 * and name; `kind` is the standard's family (`iso20022` or `flat_file`); no statuses.
 */
export const paymentFormatsSource: SourceReader = async (q) => {
  const kinds = { iso20022: 'application/xml', flat_file: 'text/plain' } as const;
  if (q.kind && !Object.hasOwn(kinds, q.kind)) throw new CuadraError('invalid_input', `"${q.kind}" is not a kind of payment_formats (iso20022, flat_file).`, { field: '/kind' });
  const needle = q.search?.toLowerCase();
  const rows = PAYMENT_FORMATS
    .filter((f) => !q.kind || f.media_type === kinds[q.kind as keyof typeof kinds])
    .filter((f) => !needle || `${f.id} ${f.name}`.toLowerCase().includes(needle))
    .slice(0, Math.min(Math.max(Math.trunc(q.limit ?? 8), 1), 100))
    .map((f) => ({
      id: f.id, name: f.name, standard: f.standard, kind: f.media_type === 'application/xml' ? 'iso20022' : 'flat_file', media_type: f.media_type,
      extension: f.extension, currencies: f.currencies ? [...f.currencies] : null, description: f.description,
    }));
  return { rows, ...(needle || q.kind ? {} : { total: PAYMENT_FORMATS.length }) };
};
