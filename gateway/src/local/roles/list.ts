import { defineTool } from '@cuadra/shared';
import { ROLE_VIEW_SCHEMA } from '../../identity/roles.ts';
import { gatewayServices } from '../services.ts';

/** Built-in roles and the workspace's custom ones, with their patterns. */
export const list = defineTool<Record<string, never>>({
  name: 'roles.list',
  description: 'List the roles of the workspace: the built-in ones (owner, admin, accountant, member, viewer, agent; built_in: true) and the custom ones, each with the tool patterns it reaches.',
  risk: 'read',
  input: { type: 'object', additionalProperties: false, properties: {} },
  output: { type: 'object', additionalProperties: false, required: ['rows'], properties: { rows: { type: 'array', items: ROLE_VIEW_SCHEMA } } },
  async handler(_input, ctx) {
    return { rows: await gatewayServices(ctx).identity.roles.list(ctx.workspace) };
  },
});
