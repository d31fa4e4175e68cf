import { defineModule } from '@cuadra/shared';
import { documents } from './model.ts';
import { documentsSource } from './sources.ts';
import { get } from './tools/get.ts';
import { list } from './tools/list.ts';
import { processTool } from './tools/process.ts';
import { upload } from './tools/upload.ts';

/** Uploaded files; a supplier's DIAN e-invoice becomes a draft bill through the bills module's own create path. */
export const documentsModule = defineModule({
  name: 'documents',
  tools: [upload, processTool, get, list],
  models: [documents],
  listed: [{ model: documents }],
  reads: { sources: { documents: documentsSource } },
  readGuards: { 'Query.documentSupplier': 'documents' },
});
