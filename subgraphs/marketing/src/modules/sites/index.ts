import { defineModule } from '@cuadra/shared';
import { leadConsentsJob } from './lead-consents.ts';
import { siteLoginCodes } from './login.ts';
import { siteLeads, sites, siteVersions } from './model.ts';
import { create } from './tools/create.ts';
import { leads } from './tools/leads.ts';
import { list } from './tools/list.ts';
import { publish } from './tools/publish.ts';
import { rollback } from './tools/rollback.ts';
import { pagesCreate } from './tools/pages_create.ts';
import { pagesDelete } from './tools/pages_delete.ts';
import { pagesList } from './tools/pages_list.ts';
import { pagesReorder } from './tools/pages_reorder.ts';
import { pagesUpdate } from './tools/pages_update.ts';
import { update } from './tools/update.ts';

/** Hosted sites: pages of blocks (edited one page at a time or whole) served at /s/<slug>/ with a strict CSP, published versions kept, lead forms with consent. */
export const sitesModule = defineModule({
  name: 'sites',
  tools: [create, update, publish, rollback, list, leads, pagesCreate, pagesUpdate, pagesDelete, pagesList, pagesReorder],
  models: [sites, siteVersions, siteLeads, siteLoginCodes],
  listed: [{ model: sites }],
  // crm reads a lead to make its party and deal (deals.create_from_lead): the credential must reach this module's reads.
  readGuards: { 'Query.siteLead': 'sites' },
  // The consents visitors gave on forms, recorded on the parties crm made of their leads.
  background: [leadConsentsJob],
});
