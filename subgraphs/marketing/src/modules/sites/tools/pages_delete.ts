import { CuadraError, defineTool, ID_SCHEMA } from '@cuadra/shared';
import { changeDraft, noPage, REVISION_SCHEMA } from '../draft.ts';
import { PAGE_PATH_SCHEMA } from '../model.ts';

/** Removes one page from a site's draft (the published versions keep it). */
export const pagesDelete = defineTool({
  name: 'sites.pages.delete',
  description: 'Remove the page at path from a site\'s draft. Visitors keep seeing it until sites.publish publishes the draft, and every published version keeps it (sites.rollback). A site keeps at least one page. Needs the sites.edit scope.',
  risk: 'write',
  input: { type: 'object', additionalProperties: false, required: ['site_id', 'path'], properties: { site_id: ID_SCHEMA, path: PAGE_PATH_SCHEMA, revision: REVISION_SCHEMA } },
  output: {
    type: 'object', additionalProperties: false, required: ['deleted', 'revision'],
    properties: { deleted: { type: 'string', description: 'The path of the page removed.' }, revision: { type: 'integer' } },
  },
  async handler(input, ctx) {
    const { site } = await changeDraft(ctx, input.site_id, input.revision, (current) => {
      const at = current.findIndex((p) => p.path === input.path);
      if (at < 0) throw noPage(input.path);
      if (current.length === 1) throw new CuadraError('conflict', 'A site keeps at least one page: add another before removing this one.', { field: '/path' });
      current.splice(at, 1);
      return current;
    }, '/path');
    return { deleted: input.path, revision: site.revision ?? 0 };
  },
});
