import { CURSOR_SCHEMA, defineTool, pageOutput, PAGING_NOTE } from '@cuadra/shared';
import { ROLE_VIEW_SCHEMA } from '../../identity/roles.ts';
import { gatewayServices } from '../services.ts';

/** Built-in roles and the workspace's custom ones, with their patterns. */
export const list = defineTool<{ limit?: number; cursor?: string }>({
  name: 'roles.list',
  description: 'List the roles of the workspace: the built-in ones (owner, admin, accountant, member, viewer, agent; built_in: true) and the custom ones, each with the tool patterns it reaches. Custom roles newest first.' + PAGING_NOTE,
  risk: 'read',
  input: { type: 'object', additionalProperties: false, properties: { limit: { type: 'integer', minimum: 1, maximum: 100 }, cursor: CURSOR_SCHEMA } },
  output: pageOutput(ROLE_VIEW_SCHEMA),
  async handler(input, ctx) {
    return gatewayServices(ctx).identity.roles.list(ctx.workspace, { limit: input.limit ?? 100, cursor: input.cursor });
  },
});
