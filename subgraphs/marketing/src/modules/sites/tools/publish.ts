import { CuadraError, defineTool, ID_SCHEMA, recordOutput } from '@cuadra/shared';
import { publicUrl } from '../../../lib/public-url.ts';
import { SITE_VIEW_SCHEMA, sites, siteVersions, siteView } from '../model.ts';

/**
 * Publishes a site's draft pages as its next version. The version is written first under its
 * number (`<site>.<n>`, unique), then the site points at it by a conditional update on the count it
 * read: two publishes at once make two versions or one refusal, never a pointer to a lost version.
 */
export const publish = defineTool({
  name: 'sites.publish',
  description: 'Publish a site\'s draft pages as its next version: visitors see it at once. Every published version is kept (sites.rollback goes back to one).',
  risk: 'write',
  input: { type: 'object', additionalProperties: false, required: ['id'], properties: { id: ID_SCHEMA } },
  output: recordOutput('site', SITE_VIEW_SCHEMA),
  async handler(input, ctx) {
    const site = await sites(ctx.db).findOne({ _id: input.id, workspace: ctx.workspace }).lean();
    if (!site) throw new CuadraError('not_found', `No site ${input.id} exists in this workspace.`);
    if (site.pages.length === 0) throw new CuadraError('conflict', 'The site has no pages to publish.');
    const version = site.versions + 1;
    try {
      await siteVersions(ctx.db).create({ _id: `${site._id}.${version}`, workspace: ctx.workspace, site_id: site._id, version, pages: site.pages, published_at: ctx.now });
    } catch (err) {
      if ((err as { code?: number }).code === 11000) throw new CuadraError('conflict', 'The site was published at the same moment; publish again.');
      throw err;
    }
    const doc = await sites(ctx.db).findOneAndUpdate({ _id: site._id, workspace: ctx.workspace, versions: site.versions }, { $set: { versions: version, published_version: version, updated_at: ctx.now } }, { new: true }).lean();
    if (!doc) throw new CuadraError('conflict', 'The site was published at the same moment; publish again.');
    return { site: siteView(doc, publicUrl()) };
  },
});
