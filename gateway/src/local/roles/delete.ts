import { CuadraError, defineTool, isBuiltInRole } from '@cuadra/shared';
import { gatewayServices } from '../services.ts';
import { roleKey } from './schema.ts';

/** Deletes a custom role nobody holds any more. */
export const remove = defineTool({
  name: 'roles.delete',
  description: 'Delete a custom role. Refused (conflict) while a member, a pending invitation or an active API key still has it: change their role or revoke the key first.',
  risk: 'destructive',
  input: { type: 'object', additionalProperties: false, required: ['key'], properties: { key: roleKey } },
  output: { type: 'object', additionalProperties: false, required: ['deleted', 'key'], properties: { deleted: { const: true }, key: roleKey } },
  async handler(input, ctx) {
    const { identity, people } = gatewayServices(ctx);
    if (isBuiltInRole(input.key)) throw new CuadraError('conflict', `"${input.key}" is a built-in role; it cannot be deleted.`);
    if (!(await identity.roles.get(ctx.workspace, input.key))) throw new CuadraError('not_found', `No role "${input.key}" exists in this workspace.`);
    const keys = await identity.countKeysWithRole(ctx.workspace, input.key);
    const members = people ? await people.countWithRole(ctx.workspace, input.key) : 0;
    const invited = people ? (await people.pendingInvitations(ctx.workspace)).filter((i) => i.role === input.key).length : 0;
    if (keys + members + invited > 0) {
      throw new CuadraError('conflict', `The role "${input.key}" is still held by ${members} member(s), ${invited} pending invitation(s) and ${keys} active API key(s).`);
    }
    if (!(await identity.roles.delete(ctx.workspace, input.key))) throw new CuadraError('not_found', `No role "${input.key}" exists in this workspace.`);
    return { deleted: true, key: input.key };
  },
});
