import { defineTool } from '@cuadra/shared';
import { peopleServices } from '../services.ts';
import { ACTIVE_MEMBER_SCHEMA, INVITED_MEMBER_SCHEMA } from './schema.ts';

/** The people of the workspace (active and invited), with their roles; never secrets. */
export const list = defineTool<Record<string, never>>({
  name: 'members.list',
  description: 'List the people of the workspace: members (status "active", with user_id, e-mail, name, role) and pending invitations (status "invited", with invitation_id and expiry).',
  risk: 'read',
  input: { type: 'object', additionalProperties: false, properties: {} },
  output: {
    type: 'object', additionalProperties: false, required: ['rows'],
    properties: { rows: { type: 'array', items: { anyOf: [ACTIVE_MEMBER_SCHEMA, INVITED_MEMBER_SCHEMA] } } },
  },
  async handler(_input, ctx) {
    const { people } = peopleServices(ctx);
    const members = (await people.members(ctx.workspace)).map((m) => ({ ...m, status: 'active' as const }));
    const invited = (await people.pendingInvitations(ctx.workspace)).map((i) => ({ ...i, user_id: null, status: 'invited' as const }));
    return { rows: [...members, ...invited] };
  },
});
