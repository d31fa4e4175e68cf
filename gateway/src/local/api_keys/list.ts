import { defineTool } from '@cuadra/shared';
import { API_KEY_VIEW_SCHEMA } from '../../identity/store.ts';
import { gatewayServices } from '../services.ts';

/** The workspace's API keys, without their secrets (which are not stored). */
export const list = defineTool<Record<string, never>>({
  name: 'api_keys.list',
  description: 'List the API keys of the workspace: name, role, patterns, prefix, created, expiry and revocation. Key values are never shown again.',
  risk: 'read',
  input: { type: 'object', additionalProperties: false, properties: {} },
  output: { type: 'object', additionalProperties: false, required: ['rows'], properties: { rows: { type: 'array', items: API_KEY_VIEW_SCHEMA } } },
  async handler(_input, ctx) {
    const rows = await gatewayServices(ctx).identity.listApiKeys(ctx.workspace);
    return { rows };
  },
});
