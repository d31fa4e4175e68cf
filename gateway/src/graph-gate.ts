import { assertWithinBounds, CuadraError, INPUT_BOUNDS, isCuadraError, jsonByteLength, type Logger, type Principal, type RateLimiter } from '@cuadra/shared';
import type { NextFunction, Request, Response } from 'express';
import { Kind, parse, valueFromASTUntyped, type DocumentNode, type FieldNode, type OperationDefinitionNode } from 'graphql';
import type { Catalog } from './catalog.ts';
import { sendRefusal } from './http.ts';
import { InvokePipeline, PipelineRefusal } from './pipeline.ts';

/** A subgraph's tool mutation field: `invokeCrmTool`, `invokeInvoicesTool`… */
const TOOL_FIELD = /^invoke([A-Z][A-Za-z0-9]*)Tool$/;

/** The tool mutation an operation asks for, if any. */
interface ToolCall {
  field: string;
  alias: string;
  subgraph: string;
  args: Record<string, unknown>;
}

function selectedOperation(doc: DocumentNode, name: unknown): OperationDefinitionNode | undefined {
  const ops = doc.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  if (typeof name === 'string' && name) return ops.find((o) => o.name?.value === name);
  return ops.length === 1 ? ops[0] : undefined;
}

/**
 * Finds the tool mutation of a /graphql request. A tool mutation must be the only field of its
 * operation (so it runs through the one pipeline and nothing else rides along).
 */
function toolCallOf(body: { query?: unknown; variables?: unknown; operationName?: unknown }): ToolCall | null {
  if (typeof body.query !== 'string') return null;
  let doc: DocumentNode;
  try {
    doc = parse(body.query, { maxTokens: 5_000 });
  } catch (err) {
    // Refused here rather than left to the planner: a document this gate cannot read could hide a tool mutation.
    throw new CuadraError('invalid_input', `The GraphQL document cannot be read: ${(err as Error).message}`, { field: '/query', cause: err });
  }
  const op = selectedOperation(doc, body.operationName);
  if (!op || op.operation !== 'mutation') return null;
  const fields = op.selectionSet.selections;
  const toolFields = fields.filter((s): s is FieldNode => s.kind === Kind.FIELD && TOOL_FIELD.test(s.name.value));
  if (toolFields.length === 0) return null;
  if (fields.length !== 1) {
    throw new CuadraError('invalid_input', 'A tool mutation must be the only field of its operation.', { field: '' });
  }
  const field = toolFields[0];
  const variables = (typeof body.variables === 'object' && body.variables !== null ? body.variables : {}) as Record<string, unknown>;
  const args: Record<string, unknown> = {};
  for (const arg of field.arguments ?? []) args[arg.name.value] = valueFromASTUntyped(arg.value, variables);
  const sub = TOOL_FIELD.exec(field.name.value)![1];
  return { field: field.name.value, alias: field.alias?.value ?? field.name.value, subgraph: sub[0].toLowerCase() + sub.slice(1), args };
}

/**
 * The variables of a /graphql request the graph will run, checked against the contract's depth before
 * the graph (Apollo, the query planner, the subgraphs) walks them: a JSON variable 5,000 levels deep broke the graph
 * (`internal`; issue 31, finding 11). One level more than a tool's input, which a variable wraps; sizes
 * are the body limit's and each tool's own, checked after. The pointer is into the request body.
 */
function assertVariablesBounded(variables: unknown): void {
  try {
    assertWithinBounds(variables ?? {}, { ...INPUT_BOUNDS, depth: INPUT_BOUNDS.depth + 1, stringLength: Number.MAX_SAFE_INTEGER, arrayItems: Number.MAX_SAFE_INTEGER });
  } catch (err) {
    if (!isCuadraError(err)) throw err;
    throw new CuadraError('invalid_input', err.message, { field: `/variables${err.field ?? ''}` });
  }
}

/** The variables of a GET /graphql (a JSON text in the query string), parsed as the graph will parse them; undefined when absent or not JSON (the graph answers that). */
function getVariables(raw: unknown): unknown {
  if (typeof raw !== 'string') return undefined;
  try {
    return JSON.parse(raw);
  } catch {
    return undefined;
  }
}

/**
 * The gates of `/graphql` (issue 12: one gate for every surface). Every request is authenticated
 * once (by the gate before this one, `res.locals.principal`) and rate limited once, with the same
 * limiter as REST and MCP. A subgraph's tool mutation is not
 * planned through the graph: it runs through {@link InvokePipeline} like a REST invoke, so its
 * Idempotency-Key is checked the same way (1–255 visible ASCII), refusals and idempotency apply,
 * and the attempt is on the ledger. Its answer keeps the mutation's shape: `{status, body, replayed?}`.
 */
export function graphGate(deps: { pipeline: InvokePipeline; limiter: RateLimiter; catalog: Catalog; publicUrl: string; log: Logger }) {
  const refusalCtx = { publicUrl: deps.publicUrl, log: deps.log };
  return async (req: Request, res: Response, next: NextFunction) => {
    let call: ToolCall | null;
    try {
      call = req.method === 'POST' ? toolCallOf((req.body ?? {}) as Record<string, unknown>) : null;
      // A tool mutation is answered here, its input bounded by the pipeline (on the ledger); anything else goes to the graph.
      if (!call) assertVariablesBounded(req.method === 'POST' ? (req.body as { variables?: unknown } | undefined)?.variables : getVariables(req.query.variables));
    } catch (err) {
      return sendRefusal(res, err, refusalCtx);
    }
    if (!call) {
      // Any other graph operation: the caller (already authenticated) spends from the same limits.
      try {
        const headers = await deps.limiter.consume(res.locals.principal);
        for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
        // A graph read takes its turn in the workspace's share as a tool call does, until its answer
        // is sent or the caller leaves; a caller gone before its turn is owed nothing: it never runs.
        if (!(await deps.pipeline.fairShare.holdForAnswer((res.locals.principal as Principal).workspace, res))) return;
      } catch (err) {
        return sendRefusal(res, err, refusalCtx);
      }
      return next();
    }
    const tool = typeof call.args.tool === 'string' ? call.args.tool : '';
    const entry = deps.catalog.get(tool);
    // The mutation of one subgraph runs only that subgraph's tools.
    const mismatch = entry !== undefined && entry.subgraph !== call.subgraph;
    const key = call.args.idempotencyKey;
    const approval = call.args.approvalId;
    const dryRun = call.args.dryRun;
    let answer: { status: number; body: unknown; replayed?: boolean };
    let headers: Record<string, string> = {};
    try {
      // The mutation's `dryRun` is REST's X-Dry-Run: a caller who asked for a dry run never gets the call itself.
      if (dryRun !== undefined && dryRun !== null && typeof dryRun !== 'boolean') throw new CuadraError('invalid_input', 'dryRun is true or false; nothing was done.', { field: '/dryRun' });
      const result = await deps.pipeline.invoke({
        authorization: req.header('authorization'),
        // Authenticated (and its tenant checked) by /graphql's first gate for this request: not looked up twice.
        principal: res.locals.principal,
        tool: mismatch ? `${call.subgraph}:${tool}` : tool,
        tenant: req.header('x-tenant-id'),
        idempotencyKey: key === null || key === undefined ? undefined : String(key),
        approvalId: approval === null || approval === undefined ? undefined : String(approval),
        dryRun: dryRun === true,
        body: async (limit) => {
          // The same size limit as a REST body, first (the JSON was parsed by express already; measured
          // without recursion), then the pipeline's bounds and schema, as for REST.
          if (jsonByteLength(call.args.input ?? null, limit) > limit) throw new CuadraError('body_too_large', `The input is larger than this tool accepts (${limit} bytes).`);
          return call.args.input;
        },
      });
      headers = result.headers;
      answer = { status: result.status, body: result.body, ...(result.headers['Idempotent-Replayed'] ? { replayed: true } : {}) };
    } catch (err) {
      if (err instanceof PipelineRefusal) {
        headers = err.headers;
        answer = { status: err.error.status, body: err.error.toBody() };
      } else {
        const error = err instanceof CuadraError ? err : new CuadraError('internal', 'The tool call could not be run.', { cause: err });
        if (error.code === 'unauthenticated') return sendRefusal(res, error, refusalCtx);
        answer = { status: error.status, body: error.toBody() };
      }
    }
    for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
    res.status(200).json({ data: { [call.alias]: answer } });
  };
}
