import { createPositioned, CuadraError, defineTool, newId, recordOutput } from '@cuadra/shared';
import { publicUrl } from '../../../lib/public-url.ts';
import { checkCatalogReferences } from '../draft.ts';
import { duplicatePath, LEAD_PIPELINE_SCHEMA, PAGE_SCHEMA, SITE_VIEW_SCHEMA, SLUG_SCHEMA, sites, siteView, type SiteDoc } from '../model.ts';

/** Creates a site (a draft: visitors see nothing until sites.publish). */
export const create = defineTool({
  name: 'sites.create',
  description: 'Create the workspace\'s small website at /s/<slug>/: pages of blocks (heading, text, image, list, form, booking); a list names entries of its own or items of the catalog by item_id (shown with their current name and price with VAT). Pages are then edited one at a time with sites.pages.*. Content is text, never markup (escaped when served); images are https only. Each form submission is kept as a lead; deals.create_from_lead (crm) makes its party and a deal in lead_pipeline. A draft until sites.publish. Needs the sites.edit scope.',
  risk: 'write',
  maxInputBytes: 600_000,
  input: {
    type: 'object', additionalProperties: false, required: ['slug', 'name'],
    properties: { slug: SLUG_SCHEMA, name: { type: 'string', minLength: 1, maxLength: 120 }, pages: { type: 'array', maxItems: 30, items: PAGE_SCHEMA }, lead_pipeline: LEAD_PIPELINE_SCHEMA },
  },
  output: recordOutput('site', SITE_VIEW_SCHEMA),
  async handler(input, ctx) {
    const pages = (input.pages ?? [{ path: '/', title: input.name, blocks: [] }]) as SiteDoc['pages'];
    const dup = duplicatePath(pages);
    if (dup >= 0) throw new CuadraError('invalid_input', `Two pages have the path ${pages[dup].path}.`, { field: `/pages/${dup}/path` });
    await checkCatalogReferences(ctx.graph, pages, (i) => `/pages/${i}`);
    const doc: SiteDoc = { _id: newId('site'), workspace: ctx.workspace, slug: input.slug, name: input.name.trim(), name_lc: input.name.trim().toLowerCase(), pages, revision: 0, published_version: null, versions: 0, lead_pipeline: input.lead_pipeline ?? null, created_at: ctx.now, updated_at: ctx.now };
    try {
      await createPositioned(sites(ctx.db), doc);
    } catch (err) {
      if ((err as { code?: number }).code === 11000) throw new CuadraError('conflict', `The address /s/${input.slug}/ is taken; choose another slug.`, { field: '/slug' });
      throw err;
    }
    return { site: siteView(doc, publicUrl()) };
  },
});
