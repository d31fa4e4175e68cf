import { CuadraError, defineTool, ID_SCHEMA } from '@cuadra/shared';
import { siteLeads, sites } from '../model.ts';

/** The submissions of a site's forms, newest first, with the consent each visitor gave. */
export const leads = defineTool({
  name: 'sites.leads',
  description: 'The submissions of a site\'s forms, newest first (at most 200): name, e-mail, phone, message, and whether the visitor gave consent, with its text, time, address and browser (Ley 1581 de 2012).',
  risk: 'read',
  input: { type: 'object', additionalProperties: false, required: ['id'], properties: { id: ID_SCHEMA, limit: { type: 'integer', minimum: 1, maximum: 200 } } },
  output: {
    type: 'object', additionalProperties: false, required: ['rows'],
    properties: {
      rows: {
        type: 'array',
        items: {
          type: 'object', additionalProperties: false, required: ['id', 'path', 'name', 'email', 'phone', 'message', 'consent', 'created_at'],
          properties: {
            id: { type: 'string' }, path: { type: 'string' }, name: { type: ['string', 'null'] }, email: { type: 'string' }, phone: { type: ['string', 'null'] }, message: { type: ['string', 'null'] },
            consent: { type: 'object', additionalProperties: false, required: ['given', 'text', 'ip', 'user_agent', 'at'], properties: { given: { type: 'boolean' }, text: { type: 'string' }, ip: { type: ['string', 'null'] }, user_agent: { type: ['string', 'null'] }, at: { type: 'string' } } },
            created_at: { type: 'string' },
          },
        },
      },
    },
  },
  async handler(input, ctx) {
    const site = await sites(ctx.db).findOne({ _id: input.id, workspace: ctx.workspace }, { _id: 1 }).lean();
    if (!site) throw new CuadraError('not_found', `No site ${input.id} exists in this workspace.`);
    const rows = await siteLeads(ctx.db).find({ workspace: ctx.workspace, site_id: site._id }).sort({ created_at: -1 }).limit(input.limit ?? 50).lean();
    return { rows: rows.map((l) => ({ id: l._id, path: l.path, name: l.name, email: l.email, phone: l.phone, message: l.message, consent: { ...l.consent, at: l.consent.at.toISOString() }, created_at: l.created_at.toISOString() })) };
  },
});
