import { defineTool, pageOutput, PAGING_NOTE } from '@cuadra/shared';
import { ROLE_VIEW_SCHEMA } from '../../identity/roles.ts';
import { gatewayServices } from '../services.ts';
import { PAGE_INPUT } from '../page.ts';

/** Built-in roles and the workspace's custom ones, with their patterns. */
export const list = defineTool({
  name: 'roles.list',
  description: 'List the roles of the workspace: the built-in ones (owner, admin, accountant, member, viewer, agent; built_in: true) and the custom ones, each with the tool patterns it reaches. Custom roles newest first.' + PAGING_NOTE,
  risk: 'read',
  input: PAGE_INPUT,
  output: pageOutput(ROLE_VIEW_SCHEMA),
  async handler(input, ctx) {
    return gatewayServices(ctx).identity.roles.list(ctx.workspace, { limit: input.limit ?? 100, cursor: input.cursor });
  },
});
