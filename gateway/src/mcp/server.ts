import { CuadraError, isCuadraError, jsonByteLength, type Logger, type Principal } from '@cuadra/shared';
import { ProtocolError, ProtocolErrorCode, Server, type ServerContext, type Tool } from '@modelcontextprotocol/server';
import type { PublicTool } from '../catalog.ts';
import { PipelineRefusal, type InvokePipeline, type InvokeRequest, type RateCount } from '../pipeline.ts';
import type { Catalog } from '../catalog.ts';
import { renderAnswer, renderRefusal } from './render.ts';

/** Version reported in `serverInfo`. */
export const MCP_SERVER_VERSION = '0.1.0';

/** `_meta` keys a `tools/call` may carry in place of the REST headers of the same meaning. */
export const META_IDEMPOTENCY_KEY = 'io.cuadra/idempotency-key';
export const META_APPROVAL_ID = 'io.cuadra/approval-id';

/**
 * Who sent the HTTP request being served, established by the router before the SDK sees it.
 * Rides the SDK's `authInfo.extra`, so a 2025 session (one server instance, many requests)
 * always acts with the credential of the request at hand.
 */
export interface McpCaller {
  principal: Principal;
  authorization: string;
  tenant?: string;
  /** `Idempotency-Key` / `X-Approval-Id` headers of the HTTP request, if any. */
  idempotencyKey?: string;
  approvalId?: string;
  /** The HTTP request's rate-limit count: spent by its first tools/call (a later one in a batch counts again). */
  counted?: RateCount;
}

function callerOf(ctx: ServerContext): McpCaller {
  const caller = ctx.http?.authInfo?.extra?.caller as McpCaller | undefined;
  // The router authenticates every request before the SDK runs; reaching here without it is a wiring bug.
  if (!caller) throw new ProtocolError(ProtocolErrorCode.InternalError, 'The request was not authenticated.');
  return caller;
}

/** structuredContent of a call held for approval (render.ts). */
const HELD_RESULT_SCHEMA = { type: 'object', required: ['status', 'approval_id'], properties: { status: { const: 'pending_approval' }, approval_id: { type: 'string' } } };
/** structuredContent of a refusal (`isError`, render.ts): the contract's refusal body. */
const REFUSAL_RESULT_SCHEMA = { type: 'object', required: ['error', 'code'], properties: { error: { type: 'string' }, code: { type: 'string' } } };

/** A catalog entry as an MCP tool: the schema as is, annotations from the risk class. */
export function mcpTool(tool: PublicTool): Tool {
  return {
    name: tool.name,
    description: tool.description,
    inputSchema: tool.input_schema as Tool['inputSchema'],
    // structuredContent is the output, or (same tool) a held call's or a refusal's body: clients that
    // check results against outputSchema accept all three.
    ...(tool.output_schema ? { outputSchema: { type: 'object', anyOf: [tool.output_schema, HELD_RESULT_SCHEMA, REFUSAL_RESULT_SCHEMA] } as Tool['outputSchema'] } : {}),
    annotations: { ...tool.annotations },
    _meta: { 'io.cuadra/risk': tool.risk, 'io.cuadra/module': tool.module, 'io.cuadra/scope': tool.scope, ...(tool.deprecated ? { 'io.cuadra/deprecated': tool.deprecated } : {}) },
  };
}

function stringMeta(meta: Record<string, unknown> | undefined, key: string): string | undefined {
  const value = meta?.[key];
  return typeof value === 'string' ? value : undefined;
}

/**
 * One MCP server instance over the one invoke pipeline (CONTRACT.md §7). Low-level `Server`
 * rather than `McpServer`: the tools are data (the catalog, per credential), their schemas are
 * JSON Schema already, and input validation must be the pipeline's so refusals keep their
 * contract codes and JSON Pointer fields.
 */
export function createMcpServer(deps: { pipeline: InvokePipeline; catalog: Catalog; log: Logger }): Server {
  const server = new Server(
    { name: 'cuadra', title: 'Cuadra', version: MCP_SERVER_VERSION },
    {
      capabilities: { tools: { listChanged: false } },
      instructions:
        'Cuadra business workspace tools (invoicing, customers, payroll, projects, agents). Start with tools.search to find the tool for a task '
        + 'and tools.describe for its input schema. A call the workspace holds for approval returns structuredContent '
        + '{"status":"pending_approval","approval_id":…}; a refusal returns isError with {code, error, field?}.',
    },
  );

  server.setRequestHandler('tools/list', async (_request, ctx) => {
    const { principal } = callerOf(ctx);
    return { tools: deps.catalog.listFor(principal).map(mcpTool) };
  });

  server.setRequestHandler('tools/call', async (request, ctx) => {
    const caller = callerOf(ctx);
    const { name, arguments: args = {} } = request.params;
    const meta = request.params._meta as Record<string, unknown> | undefined;
    const counted = caller.counted;
    caller.counted = undefined;
    const invoke: InvokeRequest = {
      authorization: caller.authorization,
      // Authenticated by the router for this HTTP request (a revoked credential is refused by the next one).
      principal: caller.principal,
      counted,
      tool: name,
      tenant: caller.tenant,
      idempotencyKey: stringMeta(meta, META_IDEMPOTENCY_KEY) ?? caller.idempotencyKey,
      approvalId: stringMeta(meta, META_APPROVAL_ID) ?? caller.approvalId,
      // The arguments are parsed already; the tool's size limit applies to their JSON form, measured
      // without recursion (JSON.stringify overflows its stack on arguments thousands of levels deep).
      // The bounds (depth first) are then checked before anything else walks them (CONTRACT.md §9).
      body: async (limit) => {
        if (jsonByteLength(args, limit) > limit) {
          throw new CuadraError('body_too_large', `The input is larger than this tool accepts (${limit} bytes).`);
        }
        return args;
      },
    };
    try {
      const result = await deps.pipeline.invoke(invoke);
      return withReceipt(renderAnswer(result), result.headers);
    } catch (err) {
      const error = err instanceof PipelineRefusal ? err.error : isCuadraError(err) ? err : undefined;
      if (!error) throw err;
      // CONTRACT.md §7: an unknown tool is a protocol error; every other refusal is a tool result.
      if (error.code === 'unknown_tool') throw new ProtocolError(ProtocolErrorCode.InvalidParams, error.message);
      if (error.code === 'internal' || error.code === 'unavailable') deps.log.error({ err: error.cause ?? error, tool: name }, error.message);
      return withReceipt(renderRefusal(error), err instanceof PipelineRefusal ? err.headers : {});
    }
  });

  return server;
}

/** The `Ledger-Receipt` of the call's ledger entry, as `_meta["io.cuadra/ledger-receipt"]` (CONTRACT.md §9). */
function withReceipt<T extends { _meta?: Record<string, unknown> }>(result: T, headers: Record<string, string>): T {
  const receipt = headers['Ledger-Receipt'];
  return receipt ? { ...result, _meta: { ...result._meta, 'io.cuadra/ledger-receipt': receipt } } : result;
}
