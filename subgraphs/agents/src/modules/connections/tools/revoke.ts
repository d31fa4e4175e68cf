import { CuadraError, defineTool, ID_INPUT, recordOutput } from '@cuadra/shared';
import { CONNECTION_VIEW_SCHEMA, connections, connectionView } from '../model.ts';

/** Revokes a connection: its secrets are erased, nothing uses it again. */
export const revoke = defineTool({
  name: 'connections.revoke',
  description: 'Revoke a connection: its sealed key and tokens are erased at once and nothing (MCP servers, agents) can use it again. Revoke the grant at the provider too.',
  risk: 'destructive',
  input: ID_INPUT,
  output: recordOutput('connection', CONNECTION_VIEW_SCHEMA),
  async handler(input, ctx) {
    const after = await connections(ctx.db).findOneAndUpdate(
      { _id: input.id, workspace: ctx.workspace, status: 'active' },
      { $set: { status: 'revoked', revoked_at: ctx.now, updated_at: ctx.now, secret_sealed: '', oauth: null } },
      { returnDocument: 'after' },
    ).lean();
    if (after) return { connection: connectionView(after) };
    if (!(await connections(ctx.db).exists({ _id: input.id, workspace: ctx.workspace }))) throw new CuadraError('not_found', `No connection ${input.id} exists in this workspace.`);
    throw new CuadraError('conflict', 'This connection is revoked already.');
  },
});
