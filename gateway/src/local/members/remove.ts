import { CuadraError, defineTool } from '@cuadra/shared';
import { peopleServices } from '../services.ts';
import { assertMayManage, userId } from './schema.ts';

/** Removes a person from the workspace and ends the app access they granted in it. */
export const remove = defineTool({
  name: 'members.remove',
  description: 'Remove a member from the workspace. Their app sign-ins (OAuth grants) in this workspace are revoked at once. The last owner cannot be removed; nobody removes a member whose role is above their own.',
  risk: 'destructive',
  input: { type: 'object', additionalProperties: false, required: ['user_id'], properties: { user_id: userId } },
  output: {
    type: 'object', additionalProperties: false, required: ['removed', 'user_id', 'grants_revoked'],
    properties: { removed: { const: true }, user_id: userId, grants_revoked: { type: 'integer', minimum: 0 } },
  },
  async handler(input, ctx) {
    const { identity, people, revokeMemberGrants } = peopleServices(ctx);
    const current = await people.roleIn(ctx.workspace, input.user_id);
    if (!current) throw new CuadraError('not_found', `No member ${input.user_id} exists in this workspace.`);
    await assertMayManage(identity.roles, ctx.principal, ctx.workspace, current);
    if (current === 'owner' && (await people.countWithRole(ctx.workspace, 'owner')) <= 1) {
      throw new CuadraError('conflict', 'This is the last owner of the workspace; make someone else owner first.');
    }
    if (!(await people.removeMembership(ctx.workspace, input.user_id))) throw new CuadraError('not_found', `No member ${input.user_id} exists in this workspace.`);
    if (current === 'owner' && (await people.countWithRole(ctx.workspace, 'owner')) === 0) {
      await people.setMembership(ctx.workspace, input.user_id, 'owner');
      throw new CuadraError('conflict', 'This is the last owner of the workspace; make someone else owner first.');
    }
    const grantsRevoked = await revokeMemberGrants(ctx.workspace, input.user_id);
    return { removed: true, user_id: input.user_id, grants_revoked: grantsRevoked };
  },
});
