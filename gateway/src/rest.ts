import { assertReachesSomeTool, countedHeaders, CuadraError, type Logger } from '@cuadra/shared';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Router } from 'express';
import type { Catalog } from './catalog.ts';
import { readJsonBody, readJsonBodyNow, sendRefusal } from './http.ts';
import { InvokePipeline, PipelineRefusal, type InvokeRequest, type InvokeResult } from './pipeline.ts';

/**
 * `POST /v1/tools/{name}:invoke`. No capture group: express would decode it and answer a malformed
 * escape (`%`) before the credential is checked; the name is decoded here, after nothing else.
 */
const INVOKE_PATH = /^\/v1\/tools\/[^/]+:invoke$/;

/** One header as a string (the first, if sent twice). */
function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

type RestDeps = { pipeline: InvokePipeline; publicUrl: string; log: Logger; fastPass?: boolean };

/**
 * One REST invoke, on Node's request and response (express's are the same objects, extended):
 * the pipeline's answer, its headers, and a subgraph's body sent as the bytes the owner wrote. A
 * call that needs no await before its owner is sent on the pipeline's fast pass
 * ({@link InvokePipeline.invokeNow}); any other goes on from where that pass stopped.
 */
function invokeOverRest(req: IncomingMessage, res: ServerResponse, path: string, deps: RestDeps): void {
  const raw = path.slice('/v1/tools/'.length, -':invoke'.length);
  let tool: string;
  try {
    tool = decodeURIComponent(raw);
  } catch {
    // Not a tool name either way; the pipeline authenticates first, then answers unknown_tool.
    tool = raw;
  }
  let call: InvokeRequest;
  try {
    call = {
      authorization: header(req, 'authorization'),
      tool,
      tenant: header(req, 'x-tenant-id'),
      idempotencyKey: header(req, 'idempotency-key'),
      approvalId: header(req, 'x-approval-id'),
      version: header(req, 'cuadra-version'),
      dryRun: dryRunHeader(header(req, 'x-dry-run')),
      body: (limit) => readJsonBody(req, limit),
    };
  } catch (err) {
    sendRefusal(res, err, deps);
    return;
  }
  // A small body comes in the packet of its head, but Node's parser hands it over only after this 'request'
  // event returns: the pass runs once the packet is parsed — one microtask, not a turn of the event loop.
  queueMicrotask(() => {
    if (deps.fastPass !== false && deps.pipeline.invokeNow(call, (limit) => readJsonBodyNow(req, limit), (err, result) => answerOverRest(res, err, result, deps))) return;
    void invokeLater(res, call, deps);
  });
}

/** The general path: the pipeline's awaits, with the caller's hang-up withdrawing a call still waiting for its turn. */
async function invokeLater(res: ServerResponse, call: InvokeRequest, deps: RestDeps): Promise<void> {
  // An answered response closes too: no abort then (each makes a DOMException with its stack trace — issue 33, the hop).
  const hungUp = new AbortController();
  res.once('close', () => {
    if (!res.writableEnded) hungUp.abort();
  });
  call.signal = hungUp.signal;
  let result: InvokeResult;
  try {
    result = await deps.pipeline.invoke(call);
  } catch (err) {
    if (hungUp.signal.aborted) return;
    answerOverRest(res, err, undefined, deps);
    return;
  }
  answerOverRest(res, null, result, deps);
}

/** The pipeline's result, or its refusal, as the REST answer. */
function answerOverRest(res: ServerResponse, err: unknown, result: InvokeResult | undefined, deps: RestDeps): void {
  if (result) {
    try {
      // The owner's answer as it serialised it: the bytes `JSON.stringify(result.body)` would give.
      const body = result.json ?? JSON.stringify(result.body);
      // One head written from one object (no header map built and read back, as setHeader does per header).
      res.writeHead(result.status, { ...result.headers, 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    } catch (failed) {
      sendRefusal(res, failed, deps);
    }
  } else if (err instanceof PipelineRefusal) sendRefusal(res, err.error, { ...deps, headers: err.headers });
  else sendRefusal(res, err, deps);
}

/**
 * The REST invoke answered on the server's own request, before express (issue 33, the hop): express
 * would build its request and response, walk its router and the method guard for every call —
 * work that depends on nothing in the call. Answers what the express route answers (the same
 * function); any other request is left to express (false).
 */
export function restInvokeFastPath(deps: RestDeps): (req: IncomingMessage, res: ServerResponse) => boolean {
  return (req, res) => {
    if (req.method !== 'POST') return false;
    const url = req.url ?? '';
    const query = url.indexOf('?');
    const path = query < 0 ? url : url.slice(0, query);
    if (!INVOKE_PATH.test(path)) return false;
    invokeOverRest(req, res, path, deps);
    return true;
  };
}


/** The REST surface of the contract: `GET /v1/tools` and `POST /v1/tools/{name}:invoke`. */
export function restRouter(deps: RestDeps & { catalog: Catalog }): Router {
  const router = Router();
  const { pipeline, catalog } = deps;

  router.get('/v1/tools', async (req, res) => {
    try {
      // Counted like every request that names a credential (as MCP's tools/list is); a refusal carries its headers.
      const { principal, count } = await pipeline.authenticateCounted(req.header('authorization'));
      for (const [k, v] of Object.entries(countedHeaders(count))) res.setHeader(k, v);
      for (const [k, v] of Object.entries(await pipeline.versionFor(principal, req.header('cuadra-version')))) res.setHeader(k, v);
      InvokePipeline.checkTenant(principal, req.header('x-tenant-id'));
      // CONTRACT.md §1: `sites.login` reaches no tool; a token with no tool-reaching scope is told which scope it lacks.
      assertReachesSomeTool(principal);
      const module = typeof req.query.module === 'string' ? req.query.module : undefined;
      const search = typeof req.query.search === 'string' ? req.query.search : undefined;
      res.json({ tools: catalog.listFor(principal, { module, search }) });
    } catch (err) {
      sendRefusal(res, err, deps);
    }
  });

  // The same route for express (its method table answers 405 for other methods on these paths, and
  // an app driven without a server of its own still invokes); a gateway's server answers it first,
  // before express (restInvokeFastPath).
  router.post(INVOKE_PATH, (req, res) => invokeOverRest(req, res, req.path, deps));

  return router;
}

/** Anything else under `/v1` (mounted after every `/v1` route): not found, with a pointer to the description. */
export function restNotFound(deps: { publicUrl: string; log: Logger }): Router {
  const router = Router();
  router.use('/v1', (_req, res) => {
    sendRefusal(res, new CuadraError('not_found', 'No such endpoint. See /openapi.json.'), deps);
  });
  return router;
}

/**
 * `X-Dry-Run`: `true` asks for a dry run, `false` or no header for the call itself; anything else
 * is refused (`invalid_input`) before the call — a mistyped dry run must never run for real.
 */
export function dryRunHeader(value: string | undefined): boolean {
  if (value === undefined || value.trim().toLowerCase() === 'false') return false;
  if (value.trim().toLowerCase() === 'true') return true;
  throw new CuadraError('invalid_input', 'X-Dry-Run is true or false; nothing was done.', { field: '' });
}
