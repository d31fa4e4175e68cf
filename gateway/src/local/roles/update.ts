import { CuadraError, defineTool, isBuiltInRole, recordOutput } from '@cuadra/shared';
import { CUSTOM_ROLE_VIEW_SCHEMA, mayGrant } from '../../identity/roles.ts';
import { gatewayServices } from '../services.ts';
import { roleKey, roleName, rolePatterns } from './schema.ts';

/** Renames a custom role or changes its patterns; members and keys holding it get the change on their next call. */
export const update = defineTool({
  name: 'roles.update',
  description: 'Change a custom role\'s name or tool patterns. Every member and API key holding it reaches the new patterns from its next call on. Built-in roles cannot be changed.',
  risk: 'write',
  input: { type: 'object', additionalProperties: false, required: ['key'], properties: { key: roleKey, name: roleName, patterns: rolePatterns } },
  output: recordOutput('role', CUSTOM_ROLE_VIEW_SCHEMA),
  async handler(input, ctx) {
    const { roles } = gatewayServices(ctx).identity;
    if (isBuiltInRole(input.key)) throw new CuadraError('conflict', `"${input.key}" is a built-in role; it cannot be changed.`);
    const current = await roles.get(ctx.workspace, input.key);
    if (!current) throw new CuadraError('not_found', `No role "${input.key}" exists in this workspace.`);
    if (input.patterns && !mayGrant(ctx.principal, input.key, input.patterns)) {
      throw new CuadraError('policy_denied', `Your role "${ctx.principal.role}" does not reach every pattern you gave this role.`);
    }
    const role = await roles.update(ctx.workspace, input.key, { name: input.name?.trim() || undefined, patterns: input.patterns });
    if (!role) throw new CuadraError('not_found', `No role "${input.key}" exists in this workspace.`);
    return { role };
  },
});
