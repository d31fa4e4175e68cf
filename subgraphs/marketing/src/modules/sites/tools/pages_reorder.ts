import { CuadraError, defineTool, ID_SCHEMA } from '@cuadra/shared';
import { changeDraft, REVISION_SCHEMA } from '../draft.ts';
import { MAX_PAGES, PAGE_PATH_SCHEMA } from '../model.ts';
import { PAGES_OUTPUT_SCHEMA, pagesSummary } from './pages_list.ts';

/** Puts a site's draft pages in a new order (the site's navigation follows it). */
export const pagesReorder = defineTool({
  name: 'sites.pages.reorder',
  description: 'Put the pages of a site\'s draft in a new order: paths names every page of the draft once, in the order the navigation shows them. Visitors see it once sites.publish publishes the draft. Needs the sites.edit scope.',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['site_id', 'paths'],
    properties: { site_id: ID_SCHEMA, paths: { type: 'array', minItems: 1, maxItems: MAX_PAGES, uniqueItems: true, items: PAGE_PATH_SCHEMA }, revision: REVISION_SCHEMA },
  },
  output: PAGES_OUTPUT_SCHEMA,
  async handler(input, ctx) {
    const { site, pages } = await changeDraft(ctx, input.site_id, input.revision, (current) => {
      const byPath = new Map(current.map((p) => [p.path, p]));
      const unknown = input.paths.findIndex((p) => !byPath.has(p));
      if (unknown >= 0) throw new CuadraError('invalid_input', `The site has no page at ${input.paths[unknown]}.`, { field: `/paths/${unknown}` });
      const left = current.find((p) => !input.paths.includes(p.path));
      if (left) throw new CuadraError('invalid_input', `paths names every page of the draft once; ${left.path} is missing.`, { field: '/paths' });
      return input.paths.map((p) => byPath.get(p)!);
    }, '/paths');
    return pagesSummary(site, pages);
  },
});
