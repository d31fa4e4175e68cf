import { CuadraError, type SourceReader } from '@cuadra/shared';

/**
 * records.list `policies`: the governance store's policies of the workspace, highest priority
 * first, in one page — a workspace's policies are few (every call reads them all to decide), so
 * they are filtered here and a cursor is refused. `search` the name; `status` is ignored; no kind
 * or ref (specification §2.5). The workspace seal is left out of the rows.
 */
export const policiesSource: SourceReader = async (q, { governance, workspace }) => {
  if (q.kind !== undefined) throw new CuadraError('invalid_input', 'The source policies takes no kind.', { field: '/kind' });
  if (q.ref !== undefined) throw new CuadraError('invalid_input', 'The source policies takes no ref.', { field: '/ref' });
  if (q.cursor !== undefined) throw new CuadraError('invalid_input', 'Policies come in one page; they take no cursor.', { field: '/cursor' });
  const search = q.search?.toLowerCase();
  const matching = (await governance.policies.list(workspace)).filter((p) => !search || p.name.toLowerCase().includes(search));
  const rows = matching.slice(0, q.limit ?? 8).map(({ workspace: _sealed, ...p }) => p);
  return { rows, total: matching.length };
};
