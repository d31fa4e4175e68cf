import { CuadraError, defineTool, recordOutput } from '@cuadra/shared';
import { CUSTOM_ROLE_VIEW_SCHEMA, mayGrant } from '../../identity/roles.ts';
import { gatewayServices } from '../services.ts';
import { roleKey, roleName, rolePatterns } from './schema.ts';

/** Creates a custom role: a named set of tool patterns members and keys can be given. */
export const create = defineTool({
  name: 'roles.create',
  description: 'Create a custom role of the workspace: a key (lower case, e.g. "billing_clerk"), a name, and the tool patterns it reaches (invoices.%, %:read, invoices.%:read). Members and API keys can then be given it. A built-in role name is refused.',
  risk: 'write',
  input: { type: 'object', additionalProperties: false, required: ['key', 'name', 'patterns'], properties: { key: roleKey, name: roleName, patterns: rolePatterns } },
  output: recordOutput('role', CUSTOM_ROLE_VIEW_SCHEMA),
  async handler(input, ctx) {
    // Nobody defines a role reaching more than their own (it could then be handed out).
    if (!mayGrant(ctx.principal, input.key, input.patterns)) {
      throw new CuadraError('policy_denied', `Your role "${ctx.principal.role}" does not reach every pattern of this role.`);
    }
    const role = await gatewayServices(ctx).identity.roles.create(ctx.workspace, { key: input.key, name: input.name.trim() || input.key, patterns: input.patterns });
    return { role };
  },
});
