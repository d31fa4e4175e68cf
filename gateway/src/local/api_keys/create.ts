import { CuadraError, defineTool, TOOL_PATTERN } from '@cuadra/shared';
import { mayGrant, ROLE_KEY } from '../../identity/roles.ts';
import { API_KEY_VIEW_SCHEMA } from '../../identity/store.ts';
import { gatewayServices } from '../services.ts';

/** Creates an API key for a program; the key is in the output once and stored only as a hash. */
export const create = defineTool({
  name: 'api_keys.create',
  description: 'Create an API key (nk_…) for a program, with a role (built-in or one of the workspace\'s custom roles) and optional tool patterns narrowing it (invoices.%, %:read, invoices.%:read) and an expiry. The key is shown once in the output; only its hash is kept.',
  risk: 'write',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['name', 'role'],
    properties: {
      name: { type: 'string', minLength: 1, maxLength: 100 },
      role: { type: 'string', pattern: ROLE_KEY.source },
      patterns: { type: 'array', maxItems: 20, uniqueItems: true, items: { type: 'string', pattern: TOOL_PATTERN.source } },
      expires_at: { type: 'string', format: 'date-time' },
    },
  },
  // `api_key` is a secret (`x-secret`): the key itself, in the creator's direct answer only ("[redacted]" elsewhere).
  output: {
    type: 'object', additionalProperties: false, required: ['api_key', 'key'],
    properties: {
      api_key: { type: 'string', 'x-secret': true, description: 'The key (nk_…), shown once; only its hash is kept.' },
      key: API_KEY_VIEW_SCHEMA,
    },
  },
  async handler(input, ctx) {
    const { identity } = gatewayServices(ctx);
    const rolePatterns = await identity.roles.patternsFor(ctx.workspace, input.role);
    if (!rolePatterns) throw new CuadraError('invalid_input', `No role "${input.role}" exists in this workspace (roles.list shows them).`, { field: '/role' });
    // Nobody hands out a key more powerful than their own role (see mayGrant).
    if (!mayGrant(ctx.principal, input.role, rolePatterns)) {
      throw new CuadraError('policy_denied', `A ${ctx.principal.role} cannot create a key with the role ${input.role}.`);
    }
    let expiresAt: Date | null = null;
    if (input.expires_at) {
      expiresAt = new Date(input.expires_at);
      if (expiresAt.getTime() <= ctx.now.getTime()) throw new CuadraError('invalid_input', 'expires_at must be in the future.', { field: '/expires_at' });
    }
    // The key acts as the person who made it when approvals are decided (CONTRACT.md §9).
    const key = await identity.createApiKey({ workspace: ctx.workspace, name: input.name, role: input.role, patterns: input.patterns ?? [], expiresAt, createdByPerson: ctx.principal.person ?? null });
    const stored = (await identity.apiKeyView(ctx.workspace, key.id))!;
    return { api_key: key.api_key, key: stored };
  },
});
