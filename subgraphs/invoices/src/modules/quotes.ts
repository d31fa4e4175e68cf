import { defineModule } from '@cuadra/shared';
import { salesDocuments, salesSeries } from '../models/sales-document.ts';
import { accept } from '../tools/quotes/accept.ts';
import { convert } from '../tools/quotes/convert.ts';
import { create } from '../tools/quotes/create.ts';
import { get } from '../tools/quotes/get.ts';
import { list } from '../tools/quotes/list.ts';
import { send } from '../tools/quotes/send.ts';

/** Quotes (they share the sales documents collection with sales orders, as their own series). */
export const quotesModule = defineModule({
  name: 'quotes',
  tools: [create, send, accept, convert, get, list],
  models: [salesDocuments],
  listed: [{ model: salesDocuments, ...salesSeries('quote') }],
  reads: { sources: { quotes: { field: 'invoicesRecords', module: 'quotes' } } },
});
