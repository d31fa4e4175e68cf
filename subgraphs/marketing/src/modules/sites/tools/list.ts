import { defineListTool } from '@cuadra/shared';
import { publicUrl } from '../../../lib/public-url.ts';
import { SITE_VIEW_SCHEMA, sites, siteView, type SiteDoc } from '../model.ts';

/** Lists the workspace's sites, newest first. */
export const list = defineListTool({
  name: 'sites.list',
  description: 'List the workspace\'s sites, newest first, with their draft pages, the published version and their address.',
  model: sites,
  view: (s: SiteDoc) => siteView(s, publicUrl()),
  viewSchema: SITE_VIEW_SCHEMA,
});
