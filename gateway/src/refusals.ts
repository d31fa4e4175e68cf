import { CuadraError, isErrorCode } from '@cuadra/shared';

/**
 * Refusals that reach the gateway from elsewhere, turned back into contract errors in one place:
 * an owner's answer body (`{code, error, field?, approval_id?}`, the owning half of the pipeline)
 * and a GraphQL error (`extensions: {code, field?, extra?}`) from a subgraph or the composed graph.
 * The way out — status and body — is the error's own (`status`, `toBody()`, errors.ts).
 */

/** A refusal the contract knows, or undefined for a code it does not have. */
function known(code: unknown, message: string, field: unknown, extra: Record<string, unknown>): CuadraError | undefined {
  return isErrorCode(code) ? new CuadraError(code, message, { field: typeof field === 'string' ? field : undefined, extra }) : undefined;
}

/** The contract error of an owner's refusal body; an unknown code is `internal`. */
export function errorFromBody(body: Record<string, unknown>): CuadraError {
  const message = String(body.error ?? '');
  const extra = typeof body.approval_id === 'string' ? { approval_id: body.approval_id } : {};
  return known(body.code, message, body.field, extra) ?? new CuadraError('internal', message, { extra });
}

/** A GraphQL error as the graph hands it over. */
export interface GraphError {
  message: string;
  extensions?: { code?: unknown; field?: unknown; extra?: unknown };
}

/**
 * The contract error of a GraphQL error, with `extra` added to what its extensions carry; a code
 * the contract does not have becomes what `otherwise` says (each caller masks it its own way).
 */
export function errorFromGraph(error: GraphError, otherwise: (error: GraphError) => CuadraError, extra: Record<string, unknown> = {}): CuadraError {
  const carried = typeof error.extensions?.extra === 'object' && error.extensions.extra !== null ? error.extensions.extra as Record<string, unknown> : {};
  return known(error.extensions?.code, error.message, error.extensions?.field, { ...carried, ...extra }) ?? otherwise(error);
}
