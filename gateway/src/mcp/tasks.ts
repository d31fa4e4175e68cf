import { CuadraError, isCuadraError } from '@cuadra/shared';
import { ProtocolError, ProtocolErrorCode, type CallToolResult, type StandardSchemaV1 } from '@modelcontextprotocol/server';
import { PipelineRefusal } from '../pipeline.ts';
import { renderRefusal } from './render.ts';

/**
 * The MCP Tasks extension (`io.modelcontextprotocol/tasks`, revision 2026-07-28, SEP-2663;
 * modelcontextprotocol/ext-tasks `specification/2026-07-28/tasks.md`) over Cuadra's approvals.
 *
 * A `tools/call` the workspace holds for a person's approval is the task: its id is the
 * approval's id, and its state is the approval's, read through the one pipeline
 * (`approvals.get`, with the caller's own credential, so every gate — workspace seal, scope,
 * rate limit — applies to polling as to any call). The approval is stored before the pipeline
 * answers 202, so "a server MUST NOT return CreateTaskResult until the task is durably created"
 * (§ Task Creation) holds, and a task outlives the gateway that created it.
 */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** Missing Required Client Capability (2026-07-28 schema, `-32021`). */
export const MISSING_REQUIRED_CLIENT_CAPABILITY = -32021;

/** Suggested polling interval (§ Task Polling: `pollIntervalMs`): a person decides in minutes, not milliseconds. */
const POLL_INTERVAL_MS = 5000;

/** The approval as `approvals.get` answers it (subgraphs/agents approvals/views.ts). */
export interface ApprovalView {
  id: string;
  status: 'pending' | 'approved' | 'rejected' | 'expired' | 'executing' | 'executed' | 'failed' | 'withdrawn';
  tool: string;
  requested_at: string;
  decided_at: string | null;
  reason: string | null;
  expires_at: string;
  result: { status: number; body: Record<string, unknown> } | null;
}

/** True when this request's per-request capabilities declare the tasks extension (§ Capability Negotiation). */
export function declaresTasks(meta: Record<string, unknown> | undefined): boolean {
  const capabilities = meta?.['io.modelcontextprotocol/clientCapabilities'] as { extensions?: Record<string, unknown> } | undefined;
  const declared = capabilities?.extensions?.[TASKS_EXTENSION];
  return typeof declared === 'object' && declared !== null;
}

/** The task's base fields (§ Tasks: `Task`) for an approval. */
function taskFields(approval: ApprovalView, status: string, statusMessage: string) {
  return {
    taskId: approval.id,
    status,
    statusMessage,
    createdAt: approval.requested_at,
    lastUpdatedAt: approval.decided_at ?? approval.requested_at,
    // The approval is kept (it is a governance record); the task itself never lapses.
    ttlMs: null,
    pollIntervalMs: POLL_INTERVAL_MS,
  };
}

/** `CreateTaskResult` (§ Task Creation): `resultType: "task"` and the task's seed state. */
export function createTaskResult(approvalId: string, now: Date): Record<string, unknown> {
  const at = now.toISOString();
  return {
    resultType: 'task',
    taskId: approvalId,
    status: 'input_required',
    statusMessage: 'Held for a person to approve in the workspace\'s approvals inbox.',
    createdAt: at,
    lastUpdatedAt: at,
    ttlMs: null,
    pollIntervalMs: POLL_INTERVAL_MS,
  };
}

/**
 * `DetailedTask` (§ Task Status) for an approval:
 * - pending → `input_required`; its one input request is a URL-mode elicitation pointing the
 *   person to the approvals inbox (the decision is a person's, made there, never the client's);
 * - approved, executing → `working`;
 * - executed → `completed` with the tool's result; failed, rejected, expired → `completed` with
 *   the refusal (`isError`): § Task Execution Errors keeps `failed` for JSON-RPC errors only;
 * - withdrawn (by `tasks/cancel`) → `cancelled`.
 */
export function detailedTask(approval: ApprovalView, inboxUrl: string): Record<string, unknown> {
  switch (approval.status) {
    case 'pending':
      return {
        ...taskFields(approval, 'input_required', 'Waiting for a person to approve or reject this call.'),
        inputRequests: {
          [`approval:${approval.id}`]: {
            method: 'elicitation/create',
            params: {
              mode: 'url',
              message: `A person in this workspace must approve the call to ${approval.tool} before it runs.`,
              url: `${inboxUrl}?approval=${encodeURIComponent(approval.id)}`,
              elicitationId: approval.id,
            },
          },
        },
      };
    case 'approved':
    case 'executing':
      return taskFields(approval, 'working', 'Approved; the call is running.');
    case 'executed':
      return { ...taskFields(approval, 'completed', 'Approved and run.'), result: resultOf(approval) };
    case 'withdrawn':
      return taskFields(approval, 'cancelled', 'Withdrawn by its requester before anyone decided; nothing was done.');
    case 'rejected':
      return { ...taskFields(approval, 'completed', 'Rejected; nothing was done.'), result: refusalResult(new CuadraError('policy_denied', `A person rejected this call${approval.reason ? `: ${approval.reason}` : '.'}`)) };
    case 'expired':
      return { ...taskFields(approval, 'completed', 'Nobody decided in time; nothing was done.'), result: refusalResult(new CuadraError('policy_denied', 'Nobody decided on this call before its approval expired; nothing was done.')) };
    case 'failed':
    default:
      return { ...taskFields(approval, 'completed', 'Approved, but the call was refused.'), result: resultOf(approval) };
  }
}

/** The held call's answer as the `CallToolResult` a direct call would have given. */
function resultOf(approval: ApprovalView): Record<string, unknown> {
  const answer = approval.result;
  if (answer && answer.status === 200) {
    const output = (answer.body as { output: Record<string, unknown> }).output;
    return { content: [{ type: 'text', text: JSON.stringify(output) }], structuredContent: output };
  }
  if (answer && typeof answer.body.code === 'string') {
    return { isError: true, content: [{ type: 'text', text: JSON.stringify(answer.body) }], structuredContent: { ...answer.body } };
  }
  return refusalResult(new CuadraError('internal', approval.reason ?? 'The call failed; nothing was done.'));
}

function refusalResult(error: CuadraError): Record<string, unknown> {
  return renderRefusal(error) as CallToolResult as Record<string, unknown>;
}

/**
 * A refusal of a `tasks/*` request's own approval call as the JSON-RPC error § Error Handling
 * asks: an unknown (or another workspace's) task is `-32602` Invalid params; anything else is the
 * contract's refusal carried in `data`.
 */
export function taskProtocolError(err: unknown): ProtocolError {
  const error = err instanceof PipelineRefusal ? err.error : isCuadraError(err) ? err : undefined;
  if (!error) return new ProtocolError(ProtocolErrorCode.InternalError, 'Internal error.');
  if (error.code === 'not_found') return new ProtocolError(ProtocolErrorCode.InvalidParams, 'Failed to retrieve task: Task not found');
  return new ProtocolError(error.code === 'internal' || error.code === 'unavailable' ? ProtocolErrorCode.InternalError : ProtocolErrorCode.InvalidParams, error.message, error.toBody());
}

/** `params` of `tasks/get` and `tasks/cancel`; `tasks/update` adds `inputResponses`. */
export interface TaskParams {
  taskId: string;
  _meta?: Record<string, unknown>;
  inputResponses?: Record<string, unknown>;
}

/** A Standard Schema for a `tasks/*` request's params (the SDK's 3-argument `setRequestHandler`). */
export function taskParamsSchema(withResponses: boolean): StandardSchemaV1<unknown, TaskParams> {
  return {
    '~standard': {
      version: 1,
      vendor: 'cuadra',
      validate(value: unknown) {
        const params = value as Record<string, unknown> | null;
        if (typeof params !== 'object' || params === null || typeof params.taskId !== 'string' || params.taskId.length === 0 || params.taskId.length > 200) {
          return { issues: [{ message: 'params.taskId must be a task id (a non-empty string).', path: ['taskId'] }] };
        }
        // The SDK lifts a 2026-07-28 request's `inputResponses` into `ctx.mcpReq.inputResponses` (MRTR), so it may be gone here.
        if (withResponses && params.inputResponses !== undefined && (typeof params.inputResponses !== 'object' || params.inputResponses === null || Array.isArray(params.inputResponses))) {
          return { issues: [{ message: 'params.inputResponses must be an object.', path: ['inputResponses'] }] };
        }
        const meta = typeof params._meta === 'object' && params._meta !== null ? { _meta: params._meta as Record<string, unknown> } : {};
        return { value: { taskId: params.taskId, ...meta, ...(withResponses && params.inputResponses ? { inputResponses: params.inputResponses as Record<string, unknown> } : {}) } };
      },
    },
  };
}
