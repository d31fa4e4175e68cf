import { salesDocumentListTool } from '../../../lib/sales-ops.ts';

/** Lists quotes, newest first. */
export const list = salesDocumentListTool('quote', ['draft', 'sent', 'accepted', 'declined', 'converted']);
