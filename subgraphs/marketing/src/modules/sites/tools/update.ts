import { CuadraError, defineTool, ID_SCHEMA, recordOutput } from '@cuadra/shared';
import { publicUrl } from '../../../lib/public-url.ts';
import { checkCatalogReferences } from '../draft.ts';
import { duplicatePath, LEAD_PIPELINE_SCHEMA, PAGE_SCHEMA, SITE_VIEW_SCHEMA, sites, siteView, type SiteDoc } from '../model.ts';

/** Renames a site or replaces its draft pages (what visitors see changes only with sites.publish). */
export const update = defineTool({
  name: 'sites.update',
  description: 'Rename a site, set the crm pipeline its leads open deals in (lead_pipeline; null: the default pipeline), or replace its draft pages (the whole list; see sites.create for blocks; sites.pages.* changes one page). Visitors keep seeing the published version until sites.publish.',
  risk: 'write',
  maxInputBytes: 600_000,
  input: {
    type: 'object', additionalProperties: false, required: ['id'], minProperties: 2,
    properties: { id: ID_SCHEMA, name: { type: 'string', minLength: 1, maxLength: 120 }, pages: { type: 'array', minItems: 1, maxItems: 30, items: PAGE_SCHEMA }, lead_pipeline: { anyOf: [LEAD_PIPELINE_SCHEMA, { type: 'null' }] } },
  },
  output: recordOutput('site', SITE_VIEW_SCHEMA),
  async handler(input, ctx) {
    const set: Record<string, unknown> = { updated_at: ctx.now };
    if (input.name !== undefined) Object.assign(set, { name: input.name.trim(), name_lc: input.name.trim().toLowerCase() });
    if (input.lead_pipeline !== undefined) set.lead_pipeline = input.lead_pipeline;
    if (input.pages !== undefined) {
      const dup = duplicatePath(input.pages as SiteDoc['pages']);
      if (dup >= 0) throw new CuadraError('invalid_input', `Two pages have the path ${input.pages[dup].path}.`, { field: `/pages/${dup}/path` });
      await checkCatalogReferences(ctx.graph, input.pages as SiteDoc['pages'], (i) => `/pages/${i}`);
      set.pages = input.pages;
    }
    // Replacing the pages is a change of the draft like any sites.pages.* one: its revision rises.
    const doc = await sites(ctx.db).findOneAndUpdate({ _id: input.id, workspace: ctx.workspace }, { $set: set, ...(input.pages !== undefined ? { $inc: { revision: 1 } } : {}) }, { returnDocument: 'after' }).lean();
    if (!doc) throw new CuadraError('not_found', `No site ${input.id} exists in this workspace.`);
    return { site: siteView(doc, publicUrl()) };
  },
});
