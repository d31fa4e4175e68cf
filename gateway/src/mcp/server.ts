import { CuadraError, isCuadraError, jsonByteLength, type Logger, type Principal } from '@cuadra/shared';
import { ProtocolError, ProtocolErrorCode, ResourceNotFoundError, Server, type CallToolResult, type ClientCapabilities, type ServerContext, type Tool } from '@modelcontextprotocol/server';
import type { PublicTool } from '../catalog.ts';
import { PipelineRefusal, type InvokePipeline, type InvokeRequest, type RateCount } from '../pipeline.ts';
import type { Catalog } from '../catalog.ts';
import { renderAnswer, renderRefusal } from './render.ts';
import { DASHBOARD_APP_URI, dashboardAppResource, declaresUi, readDashboardApp, UI_EXTENSION, withDashboardApp } from './apps.ts';
import { createTaskResult, declaresTasks, detailedTask, TASKS_EXTENSION, taskParamsSchema, taskProtocolError, MISSING_REQUIRED_CLIENT_CAPABILITY, type ApprovalView, type TaskParams } from './tasks.ts';

/** Version reported in `serverInfo`. */
export const MCP_SERVER_VERSION = '0.1.0';

/** `_meta` keys a `tools/call` may carry in place of the REST headers of the same meaning. */
export const META_IDEMPOTENCY_KEY = 'io.cuadra/idempotency-key';
export const META_APPROVAL_ID = 'io.cuadra/approval-id';
/**
 * `X-Dry-Run` as a `tools/call`'s `_meta` key (issue 39): `true` answers what the call would do and
 * does nothing. A prefixed name under our own reverse-DNS prefix, as the MCP specification's
 * `_meta` key format asks (basic protocol, "General fields": prefixes SHOULD be reverse DNS; those
 * whose second label is `modelcontextprotocol` or `mcp` are reserved).
 */
export const META_DRY_RUN = 'io.cuadra/dry-run';

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
/** structuredContent of a dry run (render.ts): what the call would do — REST's `X-Dry-Run` body. */
const DRY_RUN_RESULT_SCHEMA = { type: 'object', required: ['tool', 'dry_run'], properties: { tool: { type: 'string' }, dry_run: { type: 'object', required: ['decision', 'would'] } } };
/** structuredContent of a refusal (`isError`, render.ts): the contract's refusal body. */
const REFUSAL_RESULT_SCHEMA = { type: 'object', required: ['error', 'code'], properties: { error: { type: 'string' }, code: { type: 'string' } } };

/** A catalog entry as an MCP tool: the schema as is, annotations from the risk class. */
export function mcpTool(tool: PublicTool): Tool {
  return {
    name: tool.name,
    description: tool.description,
    inputSchema: tool.input_schema as Tool['inputSchema'],
    // structuredContent is the output, or (same tool) a held call's, a dry run's or a refusal's body:
    // clients that check results against outputSchema accept all four.
    ...(tool.output_schema ? { outputSchema: { type: 'object', anyOf: [tool.output_schema, HELD_RESULT_SCHEMA, DRY_RUN_RESULT_SCHEMA, REFUSAL_RESULT_SCHEMA] } as Tool['outputSchema'] } : {}),
    annotations: { ...tool.annotations },
    _meta: { 'io.cuadra/risk': tool.risk, 'io.cuadra/module': tool.module, 'io.cuadra/scope': tool.scope, ...(tool.deprecated ? { 'io.cuadra/deprecated': tool.deprecated } : {}) },
  };
}

/**
 * The request's 2026-07-28 `_meta` envelope (protocol version, client capabilities): the SDK
 * validates it and hands it over as `ctx.mcpReq.envelope`; a request's own `_meta` otherwise.
 */
function envelopeOf(ctx: ServerContext, meta: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  const envelope = (ctx.mcpReq as { envelope?: Record<string, unknown> } | undefined)?.envelope;
  return envelope && Object.keys(envelope).length > 0 ? envelope : meta;
}

/**
 * What the client declared it supports: on 2026-07-28, this request's own envelope
 * (`io.modelcontextprotocol/clientCapabilities`); on a 2025-11-25 session, its `initialize`.
 */
function clientCapabilitiesOf(server: Server, ctx: ServerContext, meta: Record<string, unknown> | undefined): ClientCapabilities | undefined {
  const declared = envelopeOf(ctx, meta)?.['io.modelcontextprotocol/clientCapabilities'];
  return (declared as ClientCapabilities | undefined) ?? server.getClientCapabilities();
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
export function createMcpServer(deps: { pipeline: InvokePipeline; catalog: Catalog; log: Logger; publicUrl: string }): Server {
  const server = new Server(
    { name: 'cuadra', title: 'Cuadra', version: MCP_SERVER_VERSION },
    {
      // The tasks extension (ext-tasks 2026-07-28 § Capability Negotiation) and MCP Apps (SEP-1865): declared in server/discover.
      capabilities: { tools: { listChanged: false }, resources: { listChanged: false }, extensions: { [TASKS_EXTENSION]: {}, [UI_EXTENSION]: {} } },
      instructions:
        'Cuadra business workspace tools (invoicing, customers, payroll, projects, agents). Start with tools.search to find the tool for a task '
        + 'and tools.describe for its input schema. A call the workspace holds for approval returns structuredContent '
        + '{"status":"pending_approval","approval_id":…}; a refusal returns isError with {code, error, field?}.',
    },
  );

  server.setRequestHandler('tools/list', async (request, ctx) => {
    const { principal } = callerOf(ctx);
    const tools = deps.catalog.listFor(principal).map(mcpTool);
    // SEP-1865 § Client<>Server Capability Negotiation: the UI link only for a host that renders MCP Apps.
    const ui = declaresUi(clientCapabilitiesOf(server, ctx, request.params?._meta as Record<string, unknown> | undefined));
    return { tools: ui ? tools.map(withDashboardApp) : tools };
  });

  // MCP Apps (SEP-1865): the dashboard app, listed and read for a client that declared the extension.
  // A template without data or credentials; the router has authenticated and counted the request.
  server.setRequestHandler('resources/list', async (request, ctx) => {
    callerOf(ctx);
    const ui = declaresUi(clientCapabilitiesOf(server, ctx, request.params?._meta as Record<string, unknown> | undefined));
    return { resources: ui ? [dashboardAppResource()] : [] };
  });
  server.setRequestHandler('resources/read', async (request, ctx) => {
    callerOf(ctx);
    if (request.params.uri !== DASHBOARD_APP_URI) throw new ResourceNotFoundError(request.params.uri);
    if (!declaresUi(clientCapabilitiesOf(server, ctx, request.params._meta as Record<string, unknown> | undefined))) {
      throw new ProtocolError(MISSING_REQUIRED_CLIENT_CAPABILITY, 'Missing required client capability', { requiredCapabilities: { extensions: { [UI_EXTENSION]: { mimeTypes: [dashboardAppResource().mimeType] } } } });
    }
    return readDashboardApp();
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
      dryRun: meta?.[META_DRY_RUN] === true,
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
      const dry = meta?.[META_DRY_RUN];
      // Anything but true or false is refused rather than taken for "no": a caller who asked for a dry run never gets the call itself.
      if (dry !== undefined && typeof dry !== 'boolean') throw new CuadraError('invalid_input', `_meta["${META_DRY_RUN}"] is true or false; nothing was done.`, { field: `/_meta/${META_DRY_RUN.replace(/~/g, '~0').replace(/\//g, '~1')}` });
      const result = await deps.pipeline.invoke(invoke);
      // ext-tasks § Capability Negotiation: a held call answers a task only to a client that declared
      // the extension on this very request; any other client gets today's pending_approval result.
      if (result.status === 202 && declaresTasks(envelopeOf(ctx, meta))) {
        const approvalId = (result.body as { approval_id: string }).approval_id;
        return withReceipt(createTaskResult(approvalId, new Date()) as unknown as CallToolResult, result.headers);
      }
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

  /** The caller's own held call `taskId`, read through the pipeline; another's is "not found" (§ Error Handling). */
  async function approvalOf(ctx: ServerContext, params: TaskParams, method: string): Promise<ApprovalView> {
    const caller = callerOf(ctx);
    const taskId = params.taskId;
    // ext-tasks § Error Handling: -32021 (Missing Required Client Capability) for a client that does not declare the extension on this request.
    if (!declaresTasks(envelopeOf(ctx, params._meta))) {
      throw new ProtocolError(MISSING_REQUIRED_CLIENT_CAPABILITY, 'Missing required client capability', { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } });
    }
    const counted = caller.counted;
    caller.counted = undefined;
    try {
      const answer = await deps.pipeline.invoke({
        authorization: caller.authorization, principal: caller.principal, counted, tool: 'approvals.get', tenant: caller.tenant,
        body: async () => ({ id: taskId }),
      });
      const approval = (answer.body as unknown as { output: { approval: ApprovalView & { requested_by: { id: string } } } }).output.approval;
      // A task belongs to the caller that made the call: its id reveals nothing to anyone else.
      if (approval.requested_by.id !== caller.principal.actor.id) throw new CuadraError('not_found', 'No such task.');
      return approval;
    } catch (err) {
      if (!(err instanceof PipelineRefusal) && !isCuadraError(err)) deps.log.error({ err, method }, 'task lookup failed');
      throw taskProtocolError(err);
    }
  }
  const inboxUrl = `${deps.publicUrl}/app/approvals`;

  server.setRequestHandler('tasks/get', { params: taskParamsSchema(false) }, async (params, ctx) => {
    return { resultType: 'complete', ...detailedTask(await approvalOf(ctx, params, 'tasks/get'), inboxUrl) };
  });
  // § Task Update Requests: the only input request is the person's decision, made in the inbox;
  // responses are acknowledged and otherwise ignored (a client cannot approve its own call).
  server.setRequestHandler('tasks/update', { params: taskParamsSchema(true) }, async (params, ctx) => {
    await approvalOf(ctx, params, 'tasks/update');
    return { resultType: 'complete' };
  });

  // § Task Cancellation: cancelling a task withdraws its pending approval (approvals.withdraw, through
  // the pipeline, so it is on the ledger); once a person decided, the decision stands and cancel
  // only acknowledges (cooperative: "MAY ultimately reach a terminal status other than cancelled").
  server.setRequestHandler('tasks/cancel', { params: taskParamsSchema(false) }, async (params, ctx) => {
    const approval = await approvalOf(ctx, params, 'tasks/cancel');
    if (approval.status !== 'pending') return { resultType: 'complete' };
    const caller = callerOf(ctx);
    try {
      await deps.pipeline.invoke({
        authorization: caller.authorization, principal: caller.principal, tool: 'approvals.withdraw', tenant: caller.tenant,
        idempotencyKey: `tasks-cancel:${params.taskId}`,
        body: async () => ({ id: params.taskId }),
      });
    } catch (err) {
      const error = err instanceof PipelineRefusal ? err.error : isCuadraError(err) ? err : undefined;
      // Decided between the read and the withdrawal: the decision stands, and the ack is still due.
      if (error?.code === 'conflict') return { resultType: 'complete' };
      throw taskProtocolError(err);
    }
    return { resultType: 'complete' };
  });

  return server;
}

/** The `Ledger-Receipt` of the call's ledger entry, as `_meta["io.cuadra/ledger-receipt"]` (CONTRACT.md §9). */
function withReceipt<T extends { _meta?: Record<string, unknown> }>(result: T, headers: Record<string, string>): T {
  const receipt = headers['Ledger-Receipt'];
  return receipt ? { ...result, _meta: { ...result._meta, 'io.cuadra/ledger-receipt': receipt } } : result;
}
