import { defineSource } from '@cuadra/shared';
import { QUOTE_STATUSES, salesDocumentMatches, salesDocuments, salesRow, salesSeries, type SalesDocument } from '../../lib/sales-document.ts';

/** records.list `quotes`: status in the quote vocabulary, search over customer name and notes (as quotes.list). */
export const quotesSource = defineSource<SalesDocument>({
  model: salesDocuments,
  series: salesSeries('quote'),
  search: salesDocumentMatches,
  statuses: QUOTE_STATUSES,
  row: salesRow,
});
