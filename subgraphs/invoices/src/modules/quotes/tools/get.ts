import { salesDocumentGetTool } from '../../../lib/sales-ops.ts';

/** Reads one quote. */
export const get = salesDocumentGetTool('quote');
