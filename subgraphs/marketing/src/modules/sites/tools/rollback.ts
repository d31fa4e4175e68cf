import { CuadraError, defineTool, ID_SCHEMA, recordOutput } from '@cuadra/shared';
import { publicUrl } from '../../../lib/public-url.ts';
import { SITE_VIEW_SCHEMA, sites, siteVersions, siteView } from '../model.ts';

/** Serves an earlier published version of a site again (the draft is left as it is). */
export const rollback = defineTool({
  name: 'sites.rollback',
  description: 'Serve an earlier published version of a site again (its number from sites.list / the site\'s versions). The draft pages are not changed; a later sites.publish publishes the draft as a new version.',
  risk: 'write',
  input: { type: 'object', additionalProperties: false, required: ['id', 'version'], properties: { id: ID_SCHEMA, version: { type: 'integer', minimum: 1 } } },
  output: recordOutput('site', SITE_VIEW_SCHEMA),
  async handler(input, ctx) {
    const site = await sites(ctx.db).findOne({ _id: input.id, workspace: ctx.workspace }).lean();
    if (!site) throw new CuadraError('not_found', `No site ${input.id} exists in this workspace.`);
    const kept = await siteVersions(ctx.db).findOne({ _id: `${site._id}.${input.version}`, workspace: ctx.workspace }, { _id: 1 }).lean();
    if (!kept) throw new CuadraError('invalid_input', `The site has no published version ${input.version} (it has ${site.versions}).`, { field: '/version' });
    const doc = await sites(ctx.db).findOneAndUpdate({ _id: site._id, workspace: ctx.workspace }, { $set: { published_version: input.version, updated_at: ctx.now } }, { new: true }).lean();
    return { site: siteView(doc!, publicUrl()) };
  },
});
