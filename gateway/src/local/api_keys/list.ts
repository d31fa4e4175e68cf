import { defineTool, pageOutput, PAGING_NOTE } from '@cuadra/shared';
import { API_KEY_VIEW_SCHEMA } from '../../identity/store.ts';
import { gatewayServices } from '../services.ts';
import { PAGE_INPUT } from '../page.ts';

/** The workspace's API keys, without their secrets (which are not stored). */
export const list = defineTool({
  name: 'api_keys.list',
  description: 'List the API keys of the workspace: name, role, patterns, prefix, created, expiry and revocation. Key values are never shown again. Newest first.' + PAGING_NOTE,
  risk: 'read',
  input: PAGE_INPUT,
  output: pageOutput(API_KEY_VIEW_SCHEMA),
  async handler(input, ctx) {
    return gatewayServices(ctx).identity.listApiKeys(ctx.workspace, { limit: input.limit ?? 100, cursor: input.cursor });
  },
});
