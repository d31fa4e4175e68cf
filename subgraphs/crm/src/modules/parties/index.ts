import { defineModule } from '@cuadra/shared';
import { parties, partySearchTexts } from './model.ts';
import { partiesSource } from './sources.ts';
import { archive } from './tools/archive.ts';
import { create } from './tools/create.ts';
import { createFromDocument } from './tools/create_from_document.ts';
import { get } from './tools/get.ts';
import { list } from './tools/list.ts';
import { update } from './tools/update.ts';

/** Customers and vendors: the parties every other module references. */
export const partiesModule = defineModule({
  name: 'parties',
  tools: [create, createFromDocument, get, list, update, archive],
  models: [parties],
  listed: [{ model: parties, searchable: partySearchTexts }],
  reads: { sources: { parties: partiesSource } },
  readGuards: { 'Query.party': 'parties', 'Query.parties': 'parties', 'Query.partyByTaxId': 'parties', 'Query.partiesPage': 'parties', Party: 'parties' },
});
