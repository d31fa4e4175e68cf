import { salesDocumentGetTool } from '../sales-ops.ts';

/** Reads one quote. */
export const get = salesDocumentGetTool('quote');
