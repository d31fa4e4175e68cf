import { defineModule } from '@cuadra/shared';
import { parties } from '../models/party.ts';
import { archive } from '../tools/parties/archive.ts';
import { create } from '../tools/parties/create.ts';
import { get } from '../tools/parties/get.ts';
import { list } from '../tools/parties/list.ts';
import { update } from '../tools/parties/update.ts';

/** Customers and vendors: the parties every other module references. */
export const partiesModule = defineModule({
  name: 'parties',
  tools: [create, get, list, update, archive],
  models: [parties],
  listed: [{ model: parties }],
  reads: { sources: { parties: { field: 'crmRecords', module: 'parties' } } },
  readGuards: { 'Query.party': 'parties', 'Query.parties': 'parties', 'Query.crmRecords': 'parties', Party: 'parties' },
});
