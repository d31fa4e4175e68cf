import { CuadraError, defineTool } from '@cuadra/shared';
import { gatewayServices } from '../services.ts';

/** Revokes a key: refused at once by every gateway. */
export const revoke = defineTool({
  name: 'api_keys.revoke',
  description: 'Revoke an API key of the workspace. Calls with it are refused at once, on every gateway instance.',
  risk: 'destructive',
  input: { type: 'object', additionalProperties: false, required: ['id'], properties: { id: { type: 'string', pattern: '^key_[A-Za-z0-9_-]{1,40}$' } } },
  output: { type: 'object', additionalProperties: false, required: ['revoked', 'id'], properties: { revoked: { const: true }, id: { type: 'string', pattern: '^key_' } } },
  async handler(input, ctx) {
    const { identity } = gatewayServices(ctx);
    const key = await identity.activeApiKey(ctx.workspace, input.id);
    if (!key) throw new CuadraError('not_found', `No active API key ${input.id} exists in this workspace.`);
    // As members.* does for people: only an owner acts on what an owner holds.
    if (key.role === 'owner' && ctx.principal.role !== 'owner') {
      throw new CuadraError('policy_denied', `A ${ctx.principal.role} cannot revoke an owner's API key; only an owner can.`);
    }
    const revoked = await identity.revokeApiKey(ctx.workspace, input.id);
    if (!revoked) throw new CuadraError('not_found', `No active API key ${input.id} exists in this workspace.`);
    return { revoked: true, id: input.id };
  },
});
