import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApolloServer } from '@apollo/server';
import { ApolloServerPluginInlineTraceDisabled } from '@apollo/server/plugin/disabled';
import { unwrapResolverError } from '@apollo/server/errors';
import { expressMiddleware } from '@as-integrations/express5';
import { buildSubgraphSchema } from '@apollo/subgraph';
import type { GraphQLResolverMap } from '@apollo/subgraph/dist/schema-helper/resolverMap.js';
import express from 'express';
import { GraphQLError, parse, type GraphQLFormattedError } from 'graphql';
import GraphQLJSON from 'graphql-type-json';
import type { Connection, Model } from 'mongoose';
import { ASSERTION_HEADER, AssertionVerifier } from './credentials.ts';
import { compositeResolvers, compositeTypeDefs, type OwnedReaders } from './composite.ts';
import { isServiceAssertion, peerGraph, verifyServiceAssertion, type PeerConfig, type PeerGraph } from './peers.ts';
import { ensureModel } from './db.ts';
import { dependenciesReady } from './readiness.ts';
import { CuadraError, INTERNAL_MESSAGE, isCuadraError, statusOf, toCuadraError } from './errors.ts';
import { CHECKED_CALL_HEADER, checkedCallsFromEnv } from './checked-call.ts';
import { FairShare, fairShareFromEnv } from './fair-share.ts';
import { stampInstance } from './instance.ts';
import { reaches } from './invoke.ts';
import type { Governance } from './governance/index.ts';
import { ToolOwner, type OwnedAnswer } from './owner.ts';
import { backfillPositions, indexSearchable, type ListedSeries } from './paging.ts';
import type { Logger } from './logger.ts';
import type { Principal } from './principal.ts';
import { createRegistry, type ToolRegistry } from './registry.ts';
import type { Tool } from './tool.ts';
import { toolMutationFastPath } from './tool-mutation.ts';
import type { BackgroundJob, OwnedModules } from './module.ts';

/** The tool mutation's arguments (GraphQL or the POST /invoke body). */
interface ToolMutationArgs { tool: string; input: unknown; idempotencyKey?: string | null; approvalId?: string | null; dryRun?: boolean | null }

/** Where a subgraph answers the tool mutation without GraphQL (same assertion, same owner, same answer). */
export const TOOL_INVOKE_PATH = '/invoke';

/** Set (`1`) on every answer of {@link TOOL_INVOKE_PATH} that the owner gave: the attempt's ledger entry is written. */
export const OWNER_ANSWER_HEADER = 'cuadra-owner-answer';

/** A request whose JSON body was parsed with its bytes kept (the vouch covers the bytes, not a re-serialisation). */
type RawBodied = express.Request & { rawBody?: Buffer };

/** express.json's `verify` hook: keeps the bytes the body was parsed from. */
function keepRawBody(req: unknown, _res: unknown, buf: Buffer): void {
  (req as RawBodied).rawBody = buf;
}

/** GraphQL context of every subgraph request: the caller, sealed to one workspace. */
export interface SubgraphContext {
  principal: Principal;
  workspace: string;
  db: Connection;
  log: Logger;
  /** Reads another subgraph's graph for this workspace as this service (its configured peers); absent: none configured. */
  graph?: PeerGraph;
}

/** Name of a subgraph's tool mutation: `invokeCrmTool`, `invokeInvoicesTool`… (unique per subgraph, so they compose). */
export function toolMutationName(subgraph: string): string {
  return `invoke${subgraph[0].toUpperCase()}${subgraph.slice(1)}Tool`;
}

/**
 * The full SDL of a subgraph: its own `schema.graphql` plus the tool mutation that every
 * subgraph has (written once, here). The build composes exactly this text.
 */
export function subgraphTypeDefs(subgraph: string, schemaFile: URL | string, readers?: OwnedReaders): string {
  const own = readFileSync(schemaFile, 'utf8');
  return `${own}
${readers ? compositeTypeDefs(subgraph, readers) : ''}
scalar JSON

type Mutation {
  """Runs one of this subgraph's tools through the owning half of the invoke pipeline; returns {status, body, replayed?}: the answer exactly as the caller gets it."""
  ${toolMutationName(subgraph)}(tool: String!, input: JSON!, idempotencyKey: String, approvalId: String, dryRun: Boolean): JSON!
}
`;
}

/** What a subgraph provides to become a service. */
export interface SubgraphDefinition {
  name: string;
  /** Tool modules this subgraph owns (DOMAIN.md); tools of other modules are refused at start-up. */
  modules: readonly string[];
  tools: readonly Tool<any, any>[];
  typeDefs: string;
  resolvers: GraphQLResolverMap<any>;
  /**
   * Which tool module each read of the graph belongs to: `Query.<field>` for root fields and
   * `<Type>` for entities the gateway resolves by reference. A read is allowed when the caller
   * reaches a read tool of that module (scope, role, key patterns), so a key narrowed to
   * `invoices.%` cannot read employees through the graph. Every root field and entity must be listed.
   * A root field answering for several modules (a records field serving sources of two modules)
   * names its module per call with a function of the field's arguments.
   */
  readGuards: Record<string, string | ((args: any) => string)>;
  /** The modules' composite readers (records sources, metrics, agenda lanes), served by the shared fields. */
  readers?: OwnedReaders;
  /** This service expires pending approvals and old idempotency records for everyone. */
  maintenance?: boolean;
  /** Its modules' repairs (ModuleManifest.maintenance), run by the owner's background sweep. */
  maintenanceHooks?: OwnedModules['maintenanceHooks'];
  /** Accessors of this subgraph's collections; their indexes are built before the first request. */
  models?: readonly ((db: Connection) => Model<any>)[];
  /**
   * The collections its lists page by position (CONTRACT §9 bounded lists); documents written
   * before paging get their positions at start-up, after the indexes.
   */
  listed?: readonly ListedSeries[];
  /** Its modules' background work, started with the approval sweep. */
  background?: readonly BackgroundJob[];
}

/** What a subgraph's server needs from outside. */
export interface SubgraphDeps {
  db: Connection;
  log: Logger;
  /** PEM public key that checks the gateway's assertions. */
  assertionPublicKey: string;
  /** The shared governance stores (ledger, idempotency, policies, approvals). */
  governance: Governance;
  /** Start the background sweep that runs approved held calls, and the modules' background work (default true; tests may drive them by hand). */
  runApprovals?: boolean;
  /** The other subgraphs this one may read (service assertions); absent: none. */
  peers?: PeerConfig;
  /** Each workspace's share of this service (issue 33); absent: the limits of the environment (`FAIR_SHARE_*`). */
  fairShare?: FairShare;
}

/** A subgraph ready to listen (never listens on import). */
export interface SubgraphServer {
  app: express.Express;
  registry: ToolRegistry;
  owner: ToolOwner;
  listen(port: number, host?: string): Promise<{ server: Server; url: string; close(): Promise<void> }>;
  stop(): Promise<void>;
}

/**
 * Builds a subgraph service: Apollo Federation 2 schema on express, `/graphql` open only to
 * calls carrying a valid gateway assertion, `/healthz`, and the tool mutation wired to the
 * owning half of the invoke pipeline.
 */
export async function createSubgraphServer(def: SubgraphDefinition, deps: SubgraphDeps): Promise<SubgraphServer> {
  // Each tool's input schema is compiled at the tool's first call (the build compiled every one: scripts/build.ts).
  const registry = createRegistry(def.name, def.modules, def.tools, { compile: 'at-first-call' });
  // Unique indexes carry business rules (one tax id per workspace…): build them before serving.
  await Promise.all((def.models ?? []).map((model) => ensureModel(model(deps.db))));
  for (const { model, searchable, ...series } of def.listed ?? []) {
    await backfillPositions(model(deps.db), series);
    if (searchable) await indexSearchable(model(deps.db), { ...series, searchable });
  }
  const verifier = new AssertionVerifier(deps.assertionPublicKey);
  const mutationName = toolMutationName(def.name);
  const guarded = guardReads({ ...def, resolvers: { ...def.resolvers, Query: { ...(def.resolvers.Query as object | undefined), ...(def.readers ? compositeResolvers(def.name, def.readers, deps.governance, deps.peers, (principal, module) => readsModule(principal, module, registry)) : {}) } } }, registry);
  const owner = new ToolOwner({ subgraph: def.name, registry, governance: deps.governance, db: deps.db, log: deps.log, maintenance: def.maintenance, maintenanceHooks: def.maintenanceHooks, peers: deps.peers });
  // The tool mutation, reached through the graph or, without GraphQL, at POST /invoke (below).
  const vouching = checkedCallsFromEnv();
  const runTool = (args: ToolMutationArgs, principal: Principal, prechecked = false) => {
    // Another subgraph reads through the graph; it never runs tools (they go through the gateway's pipeline).
    if (principal.actor.type === 'service') throw new CuadraError('policy_denied', 'A service assertion reads the graph; it cannot run tools.');
    const call = { tool: args.tool, input: args.input, principal, idempotencyKey: args.idempotencyKey ?? undefined, approvalId: args.approvalId ?? undefined, dryRun: args.dryRun === true };
    return prechecked ? owner.callPrechecked(call) : owner.call(call);
  };
  const resolvers: GraphQLResolverMap<any> = {
    ...guarded,
    JSON: GraphQLJSON,
    Mutation: {
      ...(def.resolvers.Mutation as object | undefined),
      [mutationName]: (_: unknown, args: ToolMutationArgs, ctx: SubgraphContext) => runTool(args, ctx.principal),
    },
  } as GraphQLResolverMap<any>;

  const schema = buildSubgraphSchema({ typeDefs: parse(def.typeDefs), resolvers });
  const apollo = new ApolloServer<SubgraphContext>({
    schema,
    includeStacktraceInErrorResponses: false,
    plugins: [ApolloServerPluginInlineTraceDisabled()],
    formatError: (formatted, error) => formatSubgraphError(formatted, error, deps.log),
  });
  await apollo.start();
  // Secrets held in plain text by approvals stored before they were declared: sealed before serving.
  await owner.sealStoredInputs();
  if (deps.runApprovals !== false) owner.start();
  const background = deps.runApprovals !== false ? startBackground(def.background ?? [], deps) : null;

  const app = express();
  app.disable('x-powered-by');
  // Answers here are POST answers to the gateway: an ETag (a SHA-1 of every body) serves no one.
  app.set('etag', false);
  app.get('/healthz', async (_req, res) => {
    stampInstance(res);
    // Every connection a call may use, not only the own database (readiness.ts).
    const ready = await dependenciesReady({ db: deps.db, connections: [deps.governance.db], redis: [deps.governance.redis] });
    const ok = ready.database && ready.redis;
    res.status(ok ? 200 : 503).json({ status: ok ? 'ok' : 'unavailable', subgraph: def.name, database: ready.database ? 'ok' : 'unavailable', redis: ready.redis ? 'ok' : 'unavailable' });
  });
  const checkAssertion: express.RequestHandler = (req, res, next) => {
    try {
      const token = req.header(ASSERTION_HEADER);
      // A gateway assertion verified before is answered from the verifier's cache without decoding anything.
      const principal = verifier.cached(token) ?? (deps.peers && isServiceAssertion(token) ? verifyServiceAssertion(token!, deps.peers.publicKey) : verifier.verify(token));
      res.locals.principal = principal;
      next();
    } catch (err) {
      const e = err as CuadraError;
      res.status(401).json(e.toBody());
    }
  };
  // Each workspace's share of this service (issue 33): a call from the gateway — a tool call at
  // /invoke or through the graph, a graph read — runs in one of its workspace's slots. A read
  // another service makes for a call it is serving takes none: that call holds its slot already
  // (over there), and waiting here for a slot it may itself be holding could never end.
  // No pacing here: a subgraph sees only its part of a call, the gateway (where a call's slot spans
  // its whole way through the system) paces a busy workspace.
  const fairShare = deps.fairShare ?? new FairShare({ ...fairShareFromEnv(), pace: 0 });
  const takeTurn: express.RequestHandler = async (_req, res, next) => {
    const principal = res.locals.principal as Principal;
    if (principal.actor.type === 'service') return next();
    try {
      // A caller who hung up before its turn is owed nothing: its call never runs.
      if (!(await fairShare.holdForAnswer(principal.workspace, res))) return;
    } catch (err) {
      // Refused before anything ran: not an owner's answer (the gateway records the refusal on the ledger).
      const error = toCuadraError(err);
      for (const [k, v] of Object.entries((error.extra as { headers?: Record<string, string> }).headers ?? {})) res.setHeader(k, v);
      res.status(error.status).json(error.toBody());
      return;
    }
    next();
  };
  app.use('/graphql', checkAssertion, takeTurn);
  // The tool mutation without GraphQL (what the gateway's REST, MCP and canvas invokes use): the same
  // assertion check and owner call as the graph's field, answered as the REST surface answers — the
  // status, the body (`{tool, output}`, the held call's, or a refusal `{error, code, field}`) and the
  // `Ledger-Receipt` / `Idempotent-Replayed` headers — so the gateway relays the owner's answer
  // without decoding an envelope (issue 32). `Cuadra-Owner-Answer` tells an owner's answer (its ledger
  // entry written here) from this route's own refusals (no assertion, a malformed request).
  app.post(TOOL_INVOKE_PATH, checkAssertion, takeTurn, express.json({ limit: '2mb', verify: keepRawBody }), async (req, res) => {
    const args = req.body as ToolMutationArgs;
    if (typeof args?.tool !== 'string' || !('input' in args) || (args.idempotencyKey != null && typeof args.idempotencyKey !== 'string') || (args.approvalId != null && typeof args.approvalId !== 'string') || (args.dryRun != null && typeof args.dryRun !== 'boolean')) {
      res.status(400).json({ error: 'Send {tool, input, idempotencyKey?, approvalId?, dryRun?}.', code: 'invalid_input', field: '' });
      return;
    }
    const principal = res.locals.principal as Principal;
    if (principal.actor.type === 'service') {
      res.status(403).json(new CuadraError('policy_denied', 'A service assertion reads the graph; it cannot run tools.').toBody());
      return;
    }
    // The gateway vouches (a MAC over its assertion and these exact bytes) for the reach, bounds and
    // schema it checked; any other call — or this one altered — is checked here in full.
    const prechecked = vouching !== null && vouching.vouched(req.header(CHECKED_CALL_HEADER), req.header(ASSERTION_HEADER)!, (req as RawBodied).rawBody ?? Buffer.alloc(0));
    let answer: OwnedAnswer;
    try {
      answer = await runTool(args, principal, prechecked);
    } catch (err) {
      const error = toCuadraError(err);
      if (error.code === 'internal') deps.log.error({ err: error.cause ?? error }, 'tool failed');
      answer = { status: error.status, body: error.toBody() as unknown as Record<string, unknown> };
    }
    res.status(answer.status);
    res.setHeader(OWNER_ANSWER_HEADER, '1');
    if (answer.receipt) res.setHeader('ledger-receipt', answer.receipt);
    if (answer.replayed) res.setHeader('idempotent-replayed', 'true');
    if (answer.retryAfter) res.setHeader('retry-after', answer.retryAfter);
    res.setHeader('content-type', 'application/json; charset=utf-8');
    res.end(JSON.stringify(answer.body));
  });
  app.use(
    '/graphql',
    express.json({ limit: '2mb' }),
    // A document that is only the tool mutation skips Apollo's per-request pipeline (same answer).
    toolMutationFastPath(schema, mutationName, (args, principal) => runTool(args as unknown as ToolMutationArgs, principal), (formatted, error) => formatSubgraphError(formatted, error, deps.log)),
    expressMiddleware(apollo, {
      context: async ({ res }) => {
        const principal = res.locals.principal as Principal;
        return { principal, workspace: principal.workspace, db: deps.db, log: deps.log, ...(deps.peers ? { graph: peerGraph(def.name, deps.peers, principal.workspace) } : {}) };
      },
    }),
  );
  app.use((err: unknown, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
    const status = (err as { status?: number }).status;
    if (status === 413) return res.status(413).json({ error: 'The request body is too large.', code: 'body_too_large' });
    if (status === 400) return res.status(400).json({ error: 'The request body is not valid JSON.', code: 'invalid_input', field: '' });
    deps.log.error({ err }, 'unhandled subgraph error');
    res.status(500).json({ error: INTERNAL_MESSAGE, code: 'internal' });
  });

  let httpServer: Server | undefined;
  return {
    app,
    registry,
    owner,
    async listen(port, host = '127.0.0.1') {
      const server = await new Promise<Server>((resolve, reject) => {
        const s = app.listen(port, host, (err?: Error) => (err ? reject(err) : resolve(s)));
      });
      server.keepAliveTimeout = 65_000;
      httpServer = server;
      const address = server.address() as AddressInfo;
      return {
        server,
        url: `http://${host}:${address.port}`,
        close: () => closeServer(server),
      };
    },
    async stop() {
      await background?.stop();
      await owner.stop();
      if (httpServer) await closeServer(httpServer);
      await apollo.stop();
    },
  };
}

/** Runs each job every `everyMs` (a run never overlaps the same job's previous one); failures are logged and retried next time. */
function startBackground(jobs: readonly BackgroundJob[], deps: SubgraphDeps): { stop(): Promise<void> } {
  const running = new Set<Promise<void>>();
  const timers = jobs.map((job) => {
    let busy = false;
    const timer = setInterval(() => {
      if (busy) return;
      busy = true;
      const run = job.run(deps.db, new Date(), deps.log, deps.peers)
        .catch((err: unknown) => deps.log.warn({ err, job: job.name }, 'background job failed; will retry'))
        .finally(() => { busy = false; running.delete(run); });
      running.add(run);
    }, job.everyMs);
    timer.unref();
    return timer;
  });
  return {
    async stop() {
      for (const t of timers) clearInterval(t);
      await Promise.all([...running]);
    },
  };
}

/** True when the principal reaches a read tool of `module` (or, lacking one here, `<module>.list`). */
function readsModule(principal: Principal, module: string, registry: ToolRegistry): boolean {
  const readTools = [...registry.tools.values()].filter((t) => t.module === module && t.risk === 'read');
  const candidates = readTools.length > 0 ? readTools : [{ name: `${module}.list`, risk: 'read' as const, module }];
  return candidates.some((tool) => reaches(principal, tool));
}

/**
 * Wraps every root query field and every entity reference resolver with the read check of
 * its module. A refused root field answers `policy_denied`; a refused entity resolves to null
 * (the caller sees that it exists through the other subgraph's id, but none of its data).
 */
function guardReads(def: SubgraphDefinition, registry: ToolRegistry): GraphQLResolverMap<any> {
  const out: GraphQLResolverMap<any> = { ...def.resolvers };
  const moduleFor = (key: string) => {
    const module = def.readGuards[key];
    if (!module) throw new Error(`Subgraph ${def.name}: ${key} has no entry in readGuards.`);
    return module;
  };
  const query = def.resolvers.Query as Record<string, (...args: any[]) => unknown> | undefined;
  if (query) {
    out.Query = Object.fromEntries(Object.entries(query).map(([field, resolve]) => {
      const guard = moduleFor(`Query.${field}`);
      return [field, (parent: unknown, args: unknown, ctx: SubgraphContext, info: unknown) => {
        const module = typeof guard === 'function' ? guard(args) : guard;
        if (!readsModule(ctx.principal, module, registry)) {
          throw new CuadraError('policy_denied', `This credential does not reach the ${module} data (${field}).`);
        }
        return resolve(parent, args, ctx, info);
      }];
    }));
  }
  for (const [type, value] of Object.entries(def.resolvers)) {
    const resolveReference = (value as { __resolveReference?: (...args: any[]) => unknown }).__resolveReference;
    if (!resolveReference) continue;
    const module = moduleFor(type);
    if (typeof module !== 'string') throw new Error(`Subgraph ${def.name}: the read guard of the entity ${type} is one module.`);
    out[type] = {
      ...(value as object),
      __resolveReference: (ref: unknown, ctx: SubgraphContext, info: unknown) => (readsModule(ctx.principal, module, registry) ? resolveReference(ref, ctx, info) : null),
    } as never;
  }
  return out;
}

/** Closes an HTTP server, dropping idle kept-alive connections. */
export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
    setTimeout(() => server.closeAllConnections(), 2_000).unref();
  });
}

/** Contract errors keep their code and field; anything unknown is logged and masked as `internal`. */
function formatSubgraphError(formatted: GraphQLFormattedError, error: unknown, log: Logger): GraphQLFormattedError {
  const original = unwrapResolverError(error);
  if (isCuadraError(original)) {
    const extensions: Record<string, unknown> = { code: original.code, status: statusOf(original.code) };
    if (original.field !== undefined) extensions.field = original.field;
    if (original.extra && Object.keys(original.extra).length > 0) extensions.extra = original.extra;
    if (original.code === 'internal') log.error({ err: original.cause ?? original }, 'tool failed');
    return { message: original.message, path: formatted.path, extensions };
  }
  const code = formatted.extensions?.code;
  if (code === 'GRAPHQL_VALIDATION_FAILED' || code === 'GRAPHQL_PARSE_FAILED' || code === 'BAD_USER_INPUT') {
    return { message: formatted.message, locations: formatted.locations, extensions: { code } };
  }
  if (original instanceof GraphQLError && original.extensions?.code === 'UNAUTHENTICATED') return formatted;
  log.error({ err: original }, 'unexpected subgraph error');
  return { message: INTERNAL_MESSAGE, path: formatted.path, extensions: { code: 'internal', status: 500 } };
}

/** What a subgraph's `server.ts` exports: the build reads `name`, `reads`, `tools`, `typeDefs`; `index.ts` runs `createServer`. */
export interface SubgraphModule {
  name: string;
  reads: OwnedModules['reads'];
  tools: OwnedModules['tools'];
  typeDefs(): string;
  createServer(deps: SubgraphDeps): Promise<SubgraphServer>;
}

/**
 * A subgraph from its modules' manifests (src/modules/index.ts), its own schema file and the
 * resolvers of its own graph fields and entities: everything else (tools, indexes, list
 * positions, read guards, the composite fields, the tool mutation) comes from the manifests.
 */
export function defineSubgraph(def: {
  name: string; owned: OwnedModules; schema: URL; resolvers: GraphQLResolverMap<any>; maintenance?: boolean;
  /** Work once the server is built, before it listens (a data migration, an extra route). */
  prepare?: (server: SubgraphServer, deps: SubgraphDeps) => Promise<void>;
}): SubgraphModule {
  const typeDefs = () => subgraphTypeDefs(def.name, def.schema, def.owned.readers);
  return {
    name: def.name,
    reads: def.owned.reads,
    tools: def.owned.tools,
    typeDefs,
    async createServer(deps) {
      const server = await createSubgraphServer({ name: def.name, ...def.owned, maintenance: def.maintenance, typeDefs: typeDefs(), resolvers: def.resolvers }, deps);
      await def.prepare?.(server, deps);
      return server;
    },
  };
}

/** Reads one record of the caller's workspace by id as a graph node, or null (another workspace's id is null too). */
export function nodeById<D>(model: (db: Connection) => Model<any>, node: (doc: D) => unknown): (id: string, ctx: Pick<SubgraphContext, 'db' | 'workspace'>) => Promise<unknown> {
  return async (id, ctx) => {
    const doc = (await model(ctx.db).findOne({ _id: id, workspace: ctx.workspace }).lean()) as D | null;
    return doc ? node(doc) : null;
  };
}

/**
 * The root field `<thing>(id)` and the entity's `__resolveReference` of a record type: both read
 * within the caller's workspace only, so an id from another workspace resolves to null.
 */
export function entityResolvers<D>(model: (db: Connection) => Model<any>, node: (doc: D) => unknown): {
  byId: (_: unknown, args: { id: string }, ctx: SubgraphContext) => Promise<unknown>;
  reference: { __resolveReference: (ref: { id: string }, ctx: SubgraphContext) => Promise<unknown> };
} {
  const find = nodeById(model, node);
  return { byId: (_, args, ctx) => find(args.id, ctx), reference: { __resolveReference: (ref, ctx) => find(ref.id, ctx) } };
}
