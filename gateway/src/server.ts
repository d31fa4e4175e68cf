import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expressMiddleware } from '@as-integrations/express5';
import { assertReachesSomeTool, closeServer, createRegistry, CuadraError, RateLimiter, stampInstance, ToolOwner, type FairShare, type Governance, type Logger, type Quota } from '@cuadra/shared';
import express from 'express';
import type { Redis } from 'ioredis';
import type { Connection } from 'mongoose';
import { AssertionSigner } from './assertions.ts';
import { Catalog } from './catalog.ts';
import { SubgraphForwarder } from './forward.ts';
import { createGraph, supergraphFromBuild, type GraphContext } from './graph.ts';
import { LedgerEvents } from './events.ts';
import { gatewayModules, gatewayTools, GATEWAY_OWNER } from './local/index.ts';
import type { GatewayServices } from './local/services.ts';
import { createAgentWorkspaceDefaults } from './governance-defaults.ts';
import { health } from './health.ts';
import { graphGate } from './graph-gate.ts';
import { mailerFromEnv } from './mail.ts';
import { heldCallNotifier } from './pages/notify.ts';
import { methodGuard } from './methods.ts';
import { answerClientErrors, sendRefusal } from './http.ts';
import { IdentityStore } from './identity/store.ts';
import { revokeMemberGrants } from './oauth/grants.ts';
import { createPeopleAccess } from './oauth/index.ts';
import { lazyMcpRouter } from './mcp/lazy.ts';
import { openApiRouter } from './openapi/router.ts';
import { discoveryRouter } from './discovery/router.ts';
import { InvokePipeline } from './pipeline.ts';
import { graphRunner } from './canvas/graph-runner.ts';
import { DashboardStore } from './canvas/store.ts';
import { dashboardPages } from './canvas/pages.ts';
import { restInvokeFastPath, restNotFound, restRouter } from './rest.ts';
import { marketingPublic } from './marketing-public.ts';
import { bookingPublic } from './booking-public.ts';

/** What the gateway needs from outside; `index.ts` reads it from the environment. */
export interface GatewayDeps {
  db: Connection;
  redis: Redis;
  log: Logger;
  /** Base URL callers use (`PUBLIC_URL`); the OAuth issuer and challenge URLs derive from it. */
  publicUrl: string;
  /** PEM private key (ES256) signing the assertions subgraphs check. */
  signingKey: string;
  /** PEM private key (ES256) signing OAuth access tokens (`CUADRA_TOKEN_SIGNING_KEY`); the assertion key when absent. */
  tokenSigningKey?: string;
  /** Base URL of each subgraph. */
  subgraphUrls: Record<string, string>;
  /** Every address of each subgraph (its replicas, `SUBGRAPH_<NAME>_URL` as a list), taken in turn by tool calls; `subgraphUrls` when absent. */
  subgraphReplicas?: Record<string, readonly string[]>;
  quotas: { credential: Quota; workspace: Quota };
  /** The shared governance stores: the gateway writes the ledger entries of the refusals it decides. */
  governance: Governance;
  catalog?: Catalog;
  supergraphSdl?: string;
  /** PEM public key of the services' key pair (`CUADRA_SERVICE_PUBLIC_KEY`): checks the agents service's run assertions (issue 37); absent, agents' runs cannot call tools. */
  servicePublicKey?: string;
  /** Each workspace's share of this gateway (issue 33); absent: the limits of the environment (`FAIR_SHARE_*`). */
  fairShare?: FairShare;
  /**
   * Whether a REST invoke that needs no await goes on the pipeline's fast pass (InvokePipeline.invokeNow;
   * `CUADRA_REST_FAST_PASS=0` turns it off): the same answers either way, which a test compares.
   */
  restFastPass?: boolean;
}

/** The gateway, ready to listen (never listens on import). */
export interface Gateway {
  app: express.Express;
  identity: IdentityStore;
  listen(port: number, host?: string): Promise<{ server: Server; url: string }>;
  stop(): Promise<void>;
}

/** Builds the gateway: REST `/v1/tools`, `/graphql`, `/healthz`. */
export async function createGateway(deps: GatewayDeps): Promise<Gateway> {
  const catalog = deps.catalog ?? Catalog.fromBuild();
  const identity = new IdentityStore(deps.db, deps.redis);
  await identity.init();
  const signer = new AssertionSigner(deps.signingKey);
  const forwarder = new SubgraphForwarder(deps.subgraphReplicas ?? deps.subgraphUrls);
  const limiter = new RateLimiter(deps.redis, deps.quotas);
  identity.listenForRevocations(limiter);
  const mailer = mailerFromEnv(deps.log);
  // OAuth server, sign-in pages, agent sign-up and claim; access tokens become principals in pipeline.authenticate.
  const peopleAccess = await createPeopleAccess({
    db: deps.db, redis: deps.redis, log: deps.log, publicUrl: deps.publicUrl, identity, signingKey: deps.signingKey, tokenSigningKey: deps.tokenSigningKey,
    // A workspace an agent opens holds the agent's non-read calls for the owner (CONTRACT.md §3).
    onAgentWorkspaceOpened: (opened) => createAgentWorkspaceDefaults(deps.governance, opened.workspace_id),
    mailer,
  });
  identity.acceptAccessTokens(peopleAccess.tokens);
  if (deps.servicePublicKey) identity.acceptAgentRuns(deps.servicePublicKey);
  // The tools the gateway owns itself run through the same owning half as a subgraph's.
  const dashboards = new DashboardStore(deps.db);
  await dashboards.init();
  const services: GatewayServices = {
    identity, catalog, people: peopleAccess.people, publicUrl: deps.publicUrl, dashboards,
    revokeMemberGrants: (workspace, user) => revokeMemberGrants(deps.db, peopleAccess.tokens, workspace, user),
  };
  const local = new ToolOwner({ subgraph: GATEWAY_OWNER, registry: createRegistry(GATEWAY_OWNER, gatewayModules, gatewayTools, { compile: 'at-first-call' }), governance: deps.governance, db: deps.db, log: deps.log, services });
  // Every caller reaches approvals through a gateway: before it listens, no approval holds a plain secret of any tool.
  await local.sealStoredInputs(catalog.entries.map((e) => ({ name: e.name, subgraph: e.subgraph, input: e.input_schema })));
  local.start();
  const pipeline = new InvokePipeline({ identity, limiter, catalog, forwarder, signer, governance: deps.governance, local, publicUrl: deps.publicUrl, fairShare: deps.fairShare });
  // A held call e-mails the workspace's owners a link to it in the inbox (when e-mail is configured).
  if (mailer) pipeline.onHeld = heldCallNotifier({ governance: deps.governance, people: peopleAccess.people, identity, mailer, publicUrl: deps.publicUrl, log: deps.log, pipeline: () => pipeline });
  const graph = await createGraph({ supergraphSdl: deps.supergraphSdl ?? supergraphFromBuild(), urls: deps.subgraphUrls, signer, log: deps.log });
  const refusalCtx = { publicUrl: deps.publicUrl, log: deps.log };
  // The canvas reads through the composed graph as the caller, and runs result blocks' read tools through the pipeline.
  services.graph = graphRunner(graph);
  services.invokeRead = (principal, tool, input) => pipeline.invokeReadAs(principal, tool, input);

  const app = express();
  app.disable('x-powered-by');
  // No automatic ETag (a SHA-1 of every JSON answer, tool answers included); static assets set their own.
  app.set('etag', false);
  app.set('trust proxy', false);

  app.use(methodGuard(refusalCtx));

  app.get('/healthz', async (_req, res) => {
    stampInstance(res);
    const { status, body } = await health({ urls: deps.subgraphUrls, db: deps.db, governanceDb: deps.governance.db, redis: deps.redis, sources: () => events.ready });
    res.status(status).json(body);
  });

  // The REST surface first: its two routes are the hot path, and every route mounted before them is
  // matched against each call (the page routers hold dozens). No route below serves these paths.
  app.use(restRouter({ pipeline, catalog, ...refusalCtx, fastPass: deps.restFastPass ?? true }));
  const restInvoke = restInvokeFastPath({ pipeline, ...refusalCtx, fastPass: deps.restFastPass ?? true });
  app.use(peopleAccess.router);
  // GET /dashboards/{id}: the page a signed-in person views a dashboard on.
  app.use(dashboardPages({ db: deps.db, redis: deps.redis, log: deps.log, people: peopleAccess.people, identity, tokens: peopleAccess.tokens, dashboards, signingKey: deps.signingKey, publicUrl: deps.publicUrl, pipeline }));

  const events = new LedgerEvents(deps.redis, deps.log);
  app.get('/v1/events', events.handler(pipeline, refusalCtx));

  // /mcp, with the MCP server code loaded at the first MCP request (gateway/src/mcp/lazy.ts).
  app.use(lazyMcpRouter({ pipeline, catalog, ...refusalCtx }));
  app.use(marketingPublic({ marketingUrl: deps.subgraphUrls.marketing, redis: deps.redis, tokens: peopleAccess.tokens, ...refusalCtx }));
  app.use(bookingPublic({ projectsUrl: deps.subgraphUrls.projects, identity, redis: deps.redis, pipeline, ...refusalCtx }));
  app.use(openApiRouter({ catalog, publicUrl: deps.publicUrl }));
  // /.well-known/api-catalog (RFC 9727), /llms.txt and each tool's Markdown page.
  app.use(discoveryRouter({ catalog, publicUrl: deps.publicUrl }));
  app.use(restNotFound(refusalCtx));

  // GET and POST, as routes (the method guard reads the served methods from the routes).
  const graphChain: express.RequestHandler[] = [
    async (req, res, next) => {
      try {
        const principal = await pipeline.authenticate(req.header('authorization'));
        for (const [k, v] of Object.entries(await pipeline.versionFor(principal, req.header('cuadra-version')))) res.setHeader(k, v);
        InvokePipeline.checkTenant(principal, req.header('x-tenant-id'));
        assertReachesSomeTool(principal);
        res.locals.principal = principal;
        next();
      } catch (err) {
        sendRefusal(res, err, refusalCtx);
      }
    },
    express.json({ limit: '1mb' }),
    graphGate({ pipeline, limiter, catalog, ...refusalCtx }),
    expressMiddleware(graph, { context: async ({ res }): Promise<GraphContext> => ({ principal: res.locals.principal }) }),
  ];
  app.route('/graphql').get(...graphChain).post(...graphChain);

  app.use((_req, res) => sendRefusal(res, new CuadraError('not_found', 'No such endpoint.'), refusalCtx));
  app.use((err: unknown, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
    const status = (err as { status?: number }).status;
    if (status === 413) return sendRefusal(res, new CuadraError('body_too_large', 'The request body is too large.'), refusalCtx);
    if (status === 400) return sendRefusal(res, new CuadraError('invalid_input', 'The request body is not valid JSON.', { field: '' }), refusalCtx);
    sendRefusal(res, err, refusalCtx);
  });

  let httpServer: Server | undefined;
  return {
    app,
    identity,
    async listen(port, host = '127.0.0.1') {
      httpServer = await new Promise<Server>((resolve, reject) => {
        // The REST invoke first, on the server's own request; everything else through express.
        const s = createServer((req, res) => {
          if (!restInvoke(req, res)) app(req, res);
        });
        s.once('error', reject);
        s.listen(port, host, () => resolve(s));
      });
      httpServer.keepAliveTimeout = 65_000;
      answerClientErrors(httpServer);
      return { server: httpServer, url: `http://${host}:${(httpServer.address() as AddressInfo).port}` };
    },
    async stop() {
      await local.stop();
      await events.close();
      identity.close();
      if (httpServer) await closeServer(httpServer);
      await graph.stop();
      await forwarder.close();
    },
  };
}
