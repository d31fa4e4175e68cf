import { CuadraError, defineTool } from '@cuadra/shared';
import { peopleServices } from '../services.ts';
import { assertMayGrant, existingRole, INVITATION_SCHEMA, roleField } from './schema.ts';

/** Invites a person: a pending membership and a single-use link where they set a password and join. */
export const invite = defineTool({
  name: 'members.invite',
  description: 'Invite a person to the workspace with a role (built-in or custom). Output holds invite_url once: the person opens it, sets a password (or enters the one of their existing Cuadra account) and becomes a member with that role. Links work once, for 7 days.',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['email', 'role'],
    properties: {
      email: { type: 'string', maxLength: 320, pattern: '^[^\\s@]+@[^\\s@]+\\.[^\\s@]+$' },
      role: roleField,
      name: { type: 'string', minLength: 1, maxLength: 200 },
    },
  },
  // `invite_url` is a secret (`x-secret`): in the inviter's direct answer only ("[redacted]" elsewhere).
  output: {
    type: 'object', additionalProperties: false, required: ['invitation', 'invite_url'],
    properties: { invitation: INVITATION_SCHEMA, invite_url: { type: 'string', 'x-secret': true, description: 'The single-use link (…/claim?token=…), shown once.' } },
  },
  async handler(input, ctx) {
    const { identity, people, publicUrl } = peopleServices(ctx);
    const patterns = await existingRole(identity.roles, ctx.workspace, input.role);
    assertMayGrant(ctx.principal, input.role, patterns);
    const email = input.email.trim().toLowerCase();
    const existing = await people.userByEmail(email);
    if (existing && (await people.roleIn(ctx.workspace, existing._id))) throw new CuadraError('conflict', `${email} is already a member of this workspace; use members.change_role.`);
    const created = await people.createInvitation({ workspace: ctx.workspace, email, role: input.role, name: input.name?.trim(), invitedBy: ctx.principal.actor.id });
    return {
      invitation: { invitation_id: created.invitation_id, email, name: input.name?.trim() ?? null, role: input.role, status: 'invited', expires_at: created.expires_at.toISOString() },
      invite_url: `${publicUrl}/claim?token=${created.token}`,
    };
  },
});
