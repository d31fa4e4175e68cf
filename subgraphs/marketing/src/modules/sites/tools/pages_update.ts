import { CuadraError, defineTool, ID_SCHEMA } from '@cuadra/shared';
import { changeDraft, checkCatalogReferences, noPage, pageView, REVISION_SCHEMA } from '../draft.ts';
import { BLOCKS_SCHEMA, PAGE_PATH_SCHEMA, PAGE_TITLE_SCHEMA, type SitePage } from '../model.ts';
import { PAGE_OUTPUT_SCHEMA } from './pages_create.ts';

/** Changes one page of a site's draft: its path, its title or its blocks. */
export const pagesUpdate = defineTool({
  name: 'sites.pages.update',
  description: 'Change one page of a site\'s draft (the page at path): move it to new_path (unique in the site), retitle it, or replace its blocks (the whole list; see sites.create). The other pages are left as they are; visitors see the change once sites.publish publishes the draft. Needs the sites.edit scope.',
  risk: 'write',
  maxInputBytes: 600_000,
  input: {
    type: 'object', additionalProperties: false, required: ['site_id', 'path'],
    properties: { site_id: ID_SCHEMA, path: PAGE_PATH_SCHEMA, new_path: PAGE_PATH_SCHEMA, title: PAGE_TITLE_SCHEMA, blocks: BLOCKS_SCHEMA, revision: REVISION_SCHEMA },
  },
  output: PAGE_OUTPUT_SCHEMA,
  async handler(input, ctx) {
    if (input.new_path === undefined && input.title === undefined && input.blocks === undefined) throw new CuadraError('invalid_input', 'Give what changes: new_path, title or blocks.', { field: '' });
    if (input.blocks) await checkCatalogReferences(ctx.graph, [{ blocks: input.blocks as SitePage['blocks'] }], () => '');
    const path = input.new_path ?? input.path;
    const { site, pages } = await changeDraft(ctx, input.site_id, input.revision, (current) => {
      const at = current.findIndex((p) => p.path === input.path);
      if (at < 0) throw noPage(input.path);
      if (path !== input.path && current.some((p) => p.path === path)) throw new CuadraError('conflict', `The site already has a page at ${path}.`, { field: '/new_path' });
      current[at] = { path, title: input.title?.trim() ?? current[at].title, blocks: (input.blocks as SitePage['blocks'] | undefined) ?? current[at].blocks };
      return current;
    }, '/blocks');
    const at = pages.findIndex((p) => p.path === path);
    return { page: pageView(pages[at], at), revision: site.revision ?? 0 };
  },
});
