import { defineModule, operationsMaintenance } from '@cuadra/shared';
import { conversionOperation } from './sales-ops.ts';
import { salesDocuments, salesSeries } from '../../lib/sales-document.ts';
import { quotesSource } from './sources.ts';
import { accept } from './tools/accept.ts';
import { convert } from './tools/convert.ts';
import { create } from './tools/create.ts';
import { createFromDeal } from './tools/create_from_deal.ts';
import { get } from './tools/get.ts';
import { list } from './tools/list.ts';
import { send } from './tools/send.ts';

/** Quotes (they share the sales documents collection with sales orders, as their own series). */
export const quotesModule = defineModule({
  name: 'quotes',
  tools: [create, createFromDeal, send, accept, convert, get, list],
  readGuards: { 'Query.dealDocuments': 'quotes' },
  models: [salesDocuments],
  listed: [{ model: salesDocuments, ...salesSeries('quote') }],
  reads: { sources: { quotes: quotesSource } },
  // Conversions of quotes and of sales orders (one operation kind, modules/quotes/sales-ops.ts) a dead call left half done.
  maintenance: operationsMaintenance([conversionOperation]),
});
