import { CuadraError, defineSource, type SourceReader } from '@cuadra/shared';
import { connectionMatches, connections, connectionView, type ConnectionDoc } from './model.ts';

const page = defineSource<ConnectionDoc>({ model: connections, search: connectionMatches, row: connectionView });

/** records.list `connections`: newest first; search name and service; `status` ignored (specification §2.5); never a secret. */
export const connectionsSource: SourceReader = (q, ctx) => {
  if (q.kind !== undefined) throw new CuadraError('invalid_input', 'The source connections takes no kind.', { field: '/kind' });
  if (q.ref !== undefined) throw new CuadraError('invalid_input', 'The source connections takes no ref.', { field: '/ref' });
  const { status: _ignored, ...rest } = q;
  return page(rest, ctx);
};
