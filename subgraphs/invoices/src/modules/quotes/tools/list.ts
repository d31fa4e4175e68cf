import { QUOTE_STATUSES } from '../../../lib/sales-document.ts';
import { salesDocumentListTool } from '../sales-ops.ts';

/** Lists quotes, newest first. */
export const list = salesDocumentListTool('quote', QUOTE_STATUSES);
