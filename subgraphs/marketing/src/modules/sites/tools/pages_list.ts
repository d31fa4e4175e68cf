import { CuadraError, defineTool, ID_SCHEMA } from '@cuadra/shared';
import { PAGE_VIEW_SCHEMA, pageView } from '../draft.ts';
import { sites, type SiteDoc, type SitePage } from '../model.ts';

/** Output of sites.pages.list and sites.pages.reorder: the draft's pages in order, and its revision. */
export const PAGES_OUTPUT_SCHEMA = {
  type: 'object', additionalProperties: false, required: ['site_id', 'revision', 'published_version', 'rows'],
  properties: {
    site_id: { type: 'string' },
    revision: { type: 'integer', description: 'The draft\'s revision: give it back to a sites.pages.* change to be told if someone changed the draft meanwhile.' },
    published_version: { type: ['integer', 'null'] },
    rows: { type: 'array', items: PAGE_VIEW_SCHEMA },
  },
} as const;

/** A site's draft pages with its revision. */
export function pagesSummary(site: SiteDoc, pages: readonly SitePage[]) {
  return { site_id: site._id, revision: site.revision ?? 0, published_version: site.published_version, rows: pages.map(pageView) };
}

/** The pages of a site's draft, in the navigation's order. */
export const pagesList = defineTool({
  name: 'sites.pages.list',
  description: 'The pages of a site\'s draft in the order its navigation shows them (at most 30), each with its blocks, and the draft\'s revision (sites.pages.* changes may name it so no one else\'s change is lost).',
  risk: 'read',
  input: { type: 'object', additionalProperties: false, required: ['site_id'], properties: { site_id: ID_SCHEMA } },
  output: PAGES_OUTPUT_SCHEMA,
  async handler(input, ctx) {
    const site = await sites(ctx.db).findOne({ _id: input.site_id, workspace: ctx.workspace }).lean();
    if (!site) throw new CuadraError('not_found', `No site ${input.site_id} exists in this workspace.`, { field: '/site_id' });
    return pagesSummary(site, site.pages);
  },
});
