import { createPositioned, CuadraError, defineTool, newId, recordOutput, sealerFromEnv } from '@cuadra/shared';
import { checkOutboundUrl } from '../../../lib/outbound.ts';
import { CONNECTION_VIEW_SCHEMA, connections, connectionView, secretContext, type ConnectionDoc } from '../model.ts';

const sealer = sealerFromEnv();
const SECRET = { type: 'string', minLength: 1, maxLength: 8000, writeOnly: true } as const;

/** Stores a credential to an outside service, sealed. */
export const create = defineTool({
  name: 'connections.create',
  description: 'Add a connection to an outside service: an API key (kind api_key), or an OAuth 2 grant (kind oauth2: access token, refresh token, expiry, token URL, client id and secret), '
    + 'with the scopes it carries. Every key and token is sealed at rest and never shown again; an OAuth access token is refreshed before it expires. MCP servers use connections for their auth.',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['name', 'service', 'kind'],
    properties: {
      name: { type: 'string', minLength: 1, maxLength: 100, pattern: '\\S' },
      service: { type: 'string', minLength: 1, maxLength: 200 },
      kind: { enum: ['api_key', 'oauth2'] },
      scopes: { type: 'array', maxItems: 50, uniqueItems: true, items: { type: 'string', minLength: 1, maxLength: 200 } },
      api_key: { ...SECRET, description: 'kind api_key: the key or bearer token (sealed).' },
      access_token: { ...SECRET, description: 'kind oauth2: the current access token (sealed).' },
      refresh_token: { ...SECRET, description: 'kind oauth2: the refresh token (sealed).' },
      expires_in: { type: 'integer', minimum: 1, maximum: 31_536_000, description: 'kind oauth2: seconds until the access token expires.' },
      token_url: { type: 'string', minLength: 8, maxLength: 500, description: 'kind oauth2: the token endpoint (refreshes go there).' },
      client_id: { type: 'string', minLength: 1, maxLength: 500 },
      client_secret: { ...SECRET, description: 'kind oauth2, confidential clients: the client secret (sealed).' },
    },
  },
  output: recordOutput('connection', CONNECTION_VIEW_SCHEMA),
  async handler(input, ctx) {
    if (!sealer) throw new CuadraError('unavailable', 'This deployment has no seal key (CUADRA_SEAL_KEY), so a credential cannot be kept; nothing was stored.');
    const id = newId('con');
    const seal = (value: string, field: string) => sealer.seal(value, secretContext(ctx.workspace, id, field));
    const name = input.name.trim();
    let doc: ConnectionDoc;
    const base = {
      _id: id, workspace: ctx.workspace, name, name_lc: name.toLowerCase(), service: input.service.trim(), scopes: input.scopes ?? [], status: 'active' as const,
      revoked_at: null, last_refreshed_at: null, refresh_error: null, created_at: ctx.now, updated_at: ctx.now,
    };
    if (input.kind === 'api_key') {
      if (!input.api_key) throw new CuadraError('invalid_input', 'A connection of kind api_key needs its api_key.', { field: '/api_key' });
      for (const f of ['access_token', 'refresh_token', 'token_url', 'client_id', 'client_secret', 'expires_in'] as const) {
        if (input[f] !== undefined) throw new CuadraError('invalid_input', `${f} is for kind oauth2.`, { field: `/${f}` });
      }
      doc = { ...base, kind: 'api_key', secret_sealed: seal(input.api_key, 'secret'), oauth: null };
    } else {
      if (!input.access_token) throw new CuadraError('invalid_input', 'A connection of kind oauth2 needs its access_token.', { field: '/access_token' });
      if (input.api_key !== undefined) throw new CuadraError('invalid_input', 'api_key is for kind api_key.', { field: '/api_key' });
      if (input.refresh_token && (!input.token_url || !input.client_id)) {
        throw new CuadraError('invalid_input', 'A refresh token needs the token_url and client_id it is refreshed with.', { field: input.token_url ? '/client_id' : '/token_url' });
      }
      doc = {
        ...base, kind: 'oauth2', secret_sealed: seal(input.access_token, 'secret'),
        oauth: {
          token_url: input.token_url ? checkOutboundUrl(input.token_url, '/token_url') : '', client_id: input.client_id ?? '',
          client_secret_sealed: input.client_secret ? seal(input.client_secret, 'client_secret') : null,
          refresh_token_sealed: input.refresh_token ? seal(input.refresh_token, 'refresh_token') : null,
          expires_at: input.expires_in ? new Date(ctx.now.getTime() + input.expires_in * 1000) : null,
        },
      };
    }
    try {
      await createPositioned(connections(ctx.db), doc);
    } catch (err) {
      if ((err as { code?: number }).code === 11000) throw new CuadraError('conflict', `A connection named "${name}" already exists in this workspace.`);
      throw err;
    }
    return { connection: connectionView(doc) };
  },
});
