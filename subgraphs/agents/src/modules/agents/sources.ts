import { CuadraError, defineSource, type SourceReader } from '@cuadra/shared';
import { agentMatches, agents, type AgentDoc } from './model.ts';

function agentRow(a: AgentDoc) {
  return { id: a._id, name: a.name, description: a.description, model: a.model, tools: a.tools, status: a.status, created_at: a.created_at.toISOString() };
}

const page = defineSource<AgentDoc>({ model: agents, search: agentMatches, row: agentRow });

/**
 * records.list `agents`: newest first, by cursor (CONTRACT §9: `total` only without search);
 * search the name, description or model, as agents.list does; `status` is ignored, no kind or
 * ref (specification §2.5).
 */
export const agentsSource: SourceReader = (q, ctx) => {
  if (q.kind !== undefined) throw new CuadraError('invalid_input', 'The source agents takes no kind.', { field: '/kind' });
  if (q.ref !== undefined) throw new CuadraError('invalid_input', 'The source agents takes no ref.', { field: '/ref' });
  return page(q, ctx);
};
