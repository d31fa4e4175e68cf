import type { ApolloServer } from '@apollo/server';
import { CuadraError, isErrorCode } from '@cuadra/shared';
import type { GraphContext } from '../graph.ts';
import type { GraphRunner } from './routes.ts';

/**
 * Runs operations on the composed graph in-process (no HTTP hop), as the given principal: the
 * gateway's assertion for that principal goes to every subgraph the plan touches. The first
 * GraphQL error becomes a contract error with its code (the graph's formatError masks the rest).
 */
export function graphRunner(graph: ApolloServer<GraphContext>): GraphRunner {
  return async (principal, query, variables) => {
    const response = await graph.executeOperation({ query, variables }, { contextValue: { principal } });
    if (response.body.kind !== 'single') throw new CuadraError('internal', 'The graph answered in increments; the canvas reads single answers.');
    const { data, errors } = response.body.singleResult;
    if (errors?.length) {
      const code = errors[0].extensions?.code;
      throw new CuadraError(isErrorCode(code) ? code : 'internal', errors[0].message, { field: typeof errors[0].extensions?.field === 'string' ? errors[0].extensions.field : undefined });
    }
    return (data ?? {}) as Record<string, unknown>;
  };
}
