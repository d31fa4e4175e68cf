import { CuadraError, defineTool, ID_SCHEMA } from '@cuadra/shared';
import { changeDraft, checkCatalogReferences, PAGE_VIEW_SCHEMA, pageView, REVISION_SCHEMA } from '../draft.ts';
import { BLOCKS_SCHEMA, MAX_PAGES, PAGE_PATH_SCHEMA, PAGE_TITLE_SCHEMA, type SitePage } from '../model.ts';

/** Output of the sites.pages.* tools that answer one page. */
export const PAGE_OUTPUT_SCHEMA = {
  type: 'object', additionalProperties: false, required: ['page', 'revision'],
  properties: { page: PAGE_VIEW_SCHEMA, revision: { type: 'integer', description: 'The draft\'s revision after this change.' } },
} as const;

/** Adds a page to a site's draft. */
export const pagesCreate = defineTool({
  name: 'sites.pages.create',
  description: `Add a page to a site's draft at a path unique in the site (/ is the home page), with its blocks (see sites.create; a list block may name catalog items by item_id). At the end of the navigation unless a position (from 1) is given; at most ${MAX_PAGES} pages. Visitors see it once sites.publish publishes the draft. Needs the sites.edit scope.`,
  risk: 'write',
  maxInputBytes: 600_000,
  input: {
    type: 'object', additionalProperties: false, required: ['site_id', 'path', 'title'],
    properties: { site_id: ID_SCHEMA, path: PAGE_PATH_SCHEMA, title: PAGE_TITLE_SCHEMA, blocks: BLOCKS_SCHEMA, position: { type: 'integer', minimum: 1, maximum: MAX_PAGES }, revision: REVISION_SCHEMA },
  },
  output: PAGE_OUTPUT_SCHEMA,
  async handler(input, ctx) {
    const page = { path: input.path, title: input.title.trim(), blocks: input.blocks ?? [] } as SitePage;
    await checkCatalogReferences(ctx.graph, [page], () => '');
    const { site, pages } = await changeDraft(ctx, input.site_id, input.revision, (current) => {
      if (current.some((p) => p.path === page.path)) throw new CuadraError('conflict', `The site already has a page at ${page.path}; a path names one page (sites.pages.update changes it).`, { field: '/path' });
      current.splice(Math.min((input.position ?? current.length + 1) - 1, current.length), 0, page);
      return current;
    }, '/path');
    const at = pages.findIndex((p) => p.path === page.path);
    return { page: pageView(pages[at], at), revision: site.revision ?? 0 };
  },
});
