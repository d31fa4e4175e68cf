import { readFileSync } from 'node:fs';
import { ApolloGateway, RemoteGraphQLDataSource } from '@apollo/gateway';
import { ApolloServer } from '@apollo/server';
import { ASSERTION_HEADER, INTERNAL_MESSAGE, type Logger, type Principal } from '@cuadra/shared';
import type { GraphQLFormattedError } from 'graphql';
import type { AssertionSigner } from './assertions.ts';

/** Node's global fetch, as the data source's fetcher (the same Request/Response shape it expects). */
const nodeFetch = globalThis.fetch as unknown as NonNullable<ConstructorParameters<typeof RemoteGraphQLDataSource>[0]>['fetcher'];

/** Context of a /graphql request: the authenticated caller. */
export interface GraphContext {
  principal: Principal;
}

/** Reads the supergraph the build composed. */
export function supergraphFromBuild(file = new URL('../generated/supergraph.graphql', import.meta.url)): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    throw new Error('gateway/generated/supergraph.graphql is missing: run `npm run build` first.');
  }
}

/**
 * The composed graph for internal consumers: @apollo/gateway over the build-time supergraph.
 * Every subgraph fetch carries the gateway's assertion for the caller, so each subgraph
 * seals its answers to the caller's workspace.
 */
export async function createGraph(deps: { supergraphSdl: string; urls: Record<string, string>; signer: AssertionSigner; log: Logger }): Promise<ApolloServer<GraphContext>> {
  const gateway = new ApolloGateway({
    supergraphSdl: deps.supergraphSdl,
    buildService: ({ name }) =>
      new RemoteGraphQLDataSource<GraphContext>({
        url: `${deps.urls[name]}/graphql`,
        // Node's own fetch (undici, kept-alive connections) instead of the default make-fetch-happen,
        // whose agent and option handling were 8 % of the gateway's CPU in a dashboard render.
        fetcher: nodeFetch,
        willSendRequest({ request, context }) {
          if (context.principal) request.http?.headers.set(ASSERTION_HEADER, deps.signer.for(context.principal));
        },
      }),
  });
  const server = new ApolloServer<GraphContext>({
    gateway,
    includeStacktraceInErrorResponses: false,
    formatError: (formatted) => maskGraphError(formatted, deps.log),
  });
  await server.start();
  return server;
}

const PASS_THROUGH = new Set(['GRAPHQL_VALIDATION_FAILED', 'GRAPHQL_PARSE_FAILED', 'BAD_USER_INPUT', 'PERSISTED_QUERY_NOT_FOUND', 'unauthenticated', 'not_found', 'invalid_input', 'policy_denied', 'insufficient_scope', 'unavailable', 'conflict']);

function maskGraphError(formatted: GraphQLFormattedError, log: Logger): GraphQLFormattedError {
  const code = formatted.extensions?.code;
  if (typeof code === 'string' && PASS_THROUGH.has(code)) {
    // An invalid_input keeps the JSON Pointer the subgraph named (into the field's `query` argument).
    const field = formatted.extensions?.field;
    return { message: formatted.message, locations: formatted.locations, path: formatted.path, extensions: typeof field === 'string' ? { code, field } : { code } };
  }
  if (typeof formatted.message === 'string' && /ECONNREFUSED|fetch failed|socket hang up/i.test(formatted.message)) {
    return { message: 'A service behind this query is not answering.', path: formatted.path, extensions: { code: 'unavailable' } };
  }
  log.error({ error: formatted }, 'graph error');
  return { message: INTERNAL_MESSAGE, path: formatted.path, extensions: { code: 'internal' } };
}
