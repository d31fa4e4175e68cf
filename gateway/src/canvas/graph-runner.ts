import type { ApolloServer } from '@apollo/server';
import { CuadraError } from '@cuadra/shared';
import { errorFromGraph } from '../refusals.ts';
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
    if (errors?.length) throw errorFromGraph(errors[0], (e) => new CuadraError('internal', e.message));
    return (data ?? {}) as Record<string, unknown>;
  };
}
