import { defineModule } from '@cuadra/shared';
import { salesDocuments, salesSeries } from '../../lib/sales-document.ts';
import { quotesSource } from './sources.ts';
import { accept } from './tools/accept.ts';
import { convert } from './tools/convert.ts';
import { create } from './tools/create.ts';
import { get } from './tools/get.ts';
import { list } from './tools/list.ts';
import { send } from './tools/send.ts';

/** Quotes (they share the sales documents collection with sales orders, as their own series). */
export const quotesModule = defineModule({
  name: 'quotes',
  tools: [create, send, accept, convert, get, list],
  models: [salesDocuments],
  listed: [{ model: salesDocuments, ...salesSeries('quote') }],
  reads: { sources: { quotes: quotesSource } },
});
