import { CuadraError, type Logger } from '@cuadra/shared';
import { Router } from 'express';
import type { Catalog } from './catalog.ts';
import { readJsonBody, sendRefusal } from './http.ts';
import { InvokePipeline, PipelineRefusal } from './pipeline.ts';

/** Scopes that reach at least one tool (CONTRACT.md §1). */
const TOOL_SCOPES = new Set(['tools:read', 'tools', 'sites.edit']);

/** The REST surface of the contract: `GET /v1/tools` and `POST /v1/tools/{name}:invoke`. */
export function restRouter(deps: { pipeline: InvokePipeline; catalog: Catalog; publicUrl: string; log: Logger }): Router {
  const router = Router();
  const { pipeline, catalog } = deps;

  router.get('/v1/tools', async (req, res) => {
    try {
      // Counted like every request that names a credential (as MCP's tools/list is); a refusal carries its headers.
      const { principal, counted } = await pipeline.authenticateCounted(req.header('authorization'));
      for (const [k, v] of Object.entries(await counted())) res.setHeader(k, v);
      for (const [k, v] of Object.entries(await pipeline.versionFor(principal, req.header('cuadra-version')))) res.setHeader(k, v);
      InvokePipeline.checkTenant(principal, req.header('x-tenant-id'));
      // CONTRACT.md §1: `sites.login` reaches no tool; a token with no tool-reaching scope is told which scope it lacks.
      if (principal.scopes !== null && !principal.scopes.some((s) => TOOL_SCOPES.has(s))) {
        throw new CuadraError('insufficient_scope', 'This access token\'s scopes reach no tool; listing tools needs the "tools:read" scope.', { extra: { scope: 'tools:read' } });
      }
      const module = typeof req.query.module === 'string' ? req.query.module : undefined;
      const search = typeof req.query.search === 'string' ? req.query.search : undefined;
      res.json({ tools: catalog.listFor(principal, { module, search }) });
    } catch (err) {
      sendRefusal(res, err, deps);
    }
  });

  // No capture group: express would decode it and answer a malformed escape (`%`) before the
  // credential is checked; the name is decoded here, after nothing else.
  router.post(/^\/v1\/tools\/[^/]+:invoke$/, async (req, res) => {
    const raw = req.path.slice('/v1/tools/'.length, -':invoke'.length);
    let tool: string;
    try {
      tool = decodeURIComponent(raw);
    } catch {
      // Not a tool name either way; the pipeline authenticates first, then answers unknown_tool.
      tool = raw;
    }
    try {
      const result = await pipeline.invoke({
        authorization: req.header('authorization'),
        tool,
        tenant: req.header('x-tenant-id'),
        idempotencyKey: req.header('idempotency-key'),
        approvalId: req.header('x-approval-id'),
        version: req.header('cuadra-version'),
        body: (limit) => readJsonBody(req, limit),
      });
      for (const [k, v] of Object.entries(result.headers)) res.setHeader(k, v);
      if (result.json) {
        // The owner's answer as it serialised it: the same bytes `res.json(result.body)` would send.
        res.status(result.status).setHeader('content-type', 'application/json; charset=utf-8');
        res.end(result.json);
      } else {
        res.status(result.status).json(result.body);
      }
    } catch (err) {
      if (err instanceof PipelineRefusal) sendRefusal(res, err.error, { ...deps, headers: err.headers });
      else sendRefusal(res, err, deps);
    }
  });

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
