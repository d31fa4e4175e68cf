import { CuadraError, defineTool } from '@cuadra/shared';
import { peopleServices } from '../services.ts';
import { assertMayGrant, assertMayManage, existingRole, roleField, userId } from './schema.ts';

/** Gives a member another role; the workspace always keeps an owner. */
export const changeRole = defineTool({
  name: 'members.change_role',
  description: 'Change a member\'s role (built-in or custom). Nobody grants a role above their own; the last owner cannot be demoted. Takes effect on the member\'s next call, in every app they signed in to.',
  risk: 'write',
  input: { type: 'object', additionalProperties: false, required: ['user_id', 'role'], properties: { user_id: userId, role: roleField } },
  output: {
    type: 'object', additionalProperties: false, required: ['member'],
    properties: {
      member: { type: 'object', additionalProperties: false, required: ['user_id', 'role', 'previous_role'], properties: { user_id: userId, role: roleField, previous_role: { type: 'string' } } },
    },
  },
  async handler(input, ctx) {
    const { identity, people } = peopleServices(ctx);
    const current = await people.roleIn(ctx.workspace, input.user_id);
    if (!current) throw new CuadraError('not_found', `No member ${input.user_id} exists in this workspace.`);
    const patterns = await existingRole(identity.roles, ctx.workspace, input.role);
    await assertMayManage(identity.roles, ctx.principal, ctx.workspace, current);
    assertMayGrant(ctx.principal, input.role, patterns);
    const demotesOwner = current === 'owner' && input.role !== 'owner';
    if (demotesOwner && (await people.countWithRole(ctx.workspace, 'owner')) <= 1) {
      throw new CuadraError('conflict', 'This is the last owner of the workspace; make someone else owner first.');
    }
    if (!(await people.changeRole(ctx.workspace, input.user_id, input.role))) throw new CuadraError('not_found', `No member ${input.user_id} exists in this workspace.`);
    // Two demotions racing could both pass the count: the loser puts its owner back.
    if (demotesOwner && (await people.countWithRole(ctx.workspace, 'owner')) === 0) {
      await people.changeRole(ctx.workspace, input.user_id, 'owner');
      throw new CuadraError('conflict', 'This is the last owner of the workspace; make someone else owner first.');
    }
    return { member: { user_id: input.user_id, role: input.role, previous_role: current } };
  },
});
