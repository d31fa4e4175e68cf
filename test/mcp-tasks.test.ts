import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OWN_SYSTEM_SETTINGS, startTestSystem, type TestSystem } from './helpers/system.ts';
import { EVENT_WAIT_MS } from './helpers/until.ts';

// The MCP Tasks extension (io.modelcontextprotocol/tasks, 2026-07-28; ext-tasks
// specification/2026-07-28/tasks.md) over /mcp, on the wire as a client sends it: a call held
// for approval answers a task to a client that declared the extension, the task is polled
// (also through another gateway process: it lives in the store, not in the gateway that made
// it), and ends completed with the tool's result, completed with the refusal, or cancelled.

const TASKS = 'io.modelcontextprotocol/tasks';
let sys: TestSystem;
let ownerKey: string;
let adminKey: string;
let personKey: string;
let nextId = 1;

beforeAll(async () => {
  sys = await startTestSystem('mcptasks', OWN_SYSTEM_SETTINGS);
  const ws = await sys.workspace('Tareas Mcp SAS');
  ownerKey = ws.api_key;
  adminKey = (await sys.key(ws.workspace_id, 'admin')).api_key;
  personKey = (await sys.person(ws.workspace_id, 'owner', 'Decide')).api_key;
  await sys.output('policies.create', { name: 'Hold admins creating parties', priority: 50, match: { tools: ['parties.create'], roles: ['admin'] }, effect: 'hold' }, ownerKey);
});
afterAll(async () => {
  await sys?.stop();
});

/** One 2026-07-28 request (stateless: the envelope in `_meta` and the routing headers), as the spec's client sends it. */
async function rpc(method: string, params: Record<string, unknown>, opts: { key?: string; tasks?: boolean; gateway?: string } = {}) {
  const capabilities = opts.tasks === false ? {} : { extensions: { [TASKS]: {} } };
  const body = {
    jsonrpc: '2.0', id: nextId++, method,
    params: { ...params, _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': capabilities, 'io.modelcontextprotocol/clientInfo': { name: 'tasks-test', version: '1' } } },
  };
  const name = typeof params.taskId === 'string' ? params.taskId : typeof params.name === 'string' ? params.name : undefined;
  const res = await fetch(`${opts.gateway ?? sys.gatewayUrl}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${opts.key ?? adminKey}`,
      'mcp-protocol-version': '2026-07-28', 'mcp-method': method, ...(name ? { 'mcp-name': name } : {}),
    },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  const json = JSON.parse(text.startsWith('{') ? text : /^data: (.*)$/m.exec(text)![1]);
  return { status: res.status, ...json } as { status: number; result?: any; error?: { code: number; message: string; data?: any } };
}

async function heldCall(name: string) {
  const call = await rpc('tools/call', { name: 'parties.create', arguments: { name, kind: 'customer' } });
  expect(call.result, JSON.stringify(call)).toMatchObject({ resultType: 'task', status: 'input_required', taskId: expect.stringMatching(/^apr_/), ttlMs: null, pollIntervalMs: expect.any(Number) });
  return call.result.taskId as string;
}

async function partiesNamed(name: string): Promise<number> {
  return (await sys.output('parties.list', { search: name }, ownerKey)).rows.length;
}

describe('a held tools/call as a task', () => {
  it('declares the extension in server/discover (ext-tasks § Capability Negotiation)', async () => {
    const discovered = await rpc('server/discover', {});
    expect(discovered.result?.capabilities?.extensions, JSON.stringify(discovered)).toEqual({ [TASKS]: {}, 'io.modelcontextprotocol/ui': {} });
  });

  it('is input_required while a person decides, then completed with the tool\'s result, once — also polled through another gateway', async () => {
    const taskId = await heldCall('Tarea Aprobada');
    const pending = await rpc('tasks/get', { taskId });
    expect(pending.result).toMatchObject({ resultType: 'complete', taskId, status: 'input_required' });
    // The one outstanding input is the person's decision, in the approvals inbox (a URL elicitation).
    const requests = Object.values(pending.result.inputRequests) as any[];
    expect(requests).toEqual([{ method: 'elicitation/create', params: expect.objectContaining({ mode: 'url', url: expect.stringContaining(`/app/approvals?approval=${taskId}`) }) }]);
    // A response from the client is acknowledged and decides nothing: the call is still held.
    expect((await rpc('tasks/update', { taskId, inputResponses: { [Object.keys(pending.result.inputRequests)[0]]: { action: 'accept' } } })).result).toMatchObject({ resultType: 'complete' });
    expect((await rpc('tasks/get', { taskId })).result.status).toBe('input_required');
    expect(await partiesNamed('Tarea Aprobada')).toBe(0);

    expect((await sys.invoke('approvals.decide', { id: taskId, decision: 'approve' }, personKey)).status).toBe(200);
    let done = (await rpc('tasks/get', { taskId })).result;
    for (const deadline = Date.now() + EVENT_WAIT_MS; done.status !== 'completed' && Date.now() < deadline;) {
      expect(done.status).toBe('working');
      await new Promise((resolve) => setImmediate(resolve));
      done = (await rpc('tasks/get', { taskId })).result;
    }
    expect(done).toMatchObject({ status: 'completed', result: { structuredContent: { party: { name: 'Tarea Aprobada' } } } });
    expect(done.result.isError).toBeUndefined();
    expect(await partiesNamed('Tarea Aprobada')).toBe(1);

    // A gateway process that never saw the call answers the same task: it is durable, in the store.
    const other = await sys.startAnotherGateway();
    const elsewhere = await rpc('tasks/get', { taskId }, { gateway: other.url });
    expect(elsewhere.result).toEqual({ ...done, lastUpdatedAt: expect.any(String) });
    expect(await partiesNamed('Tarea Aprobada')).toBe(1);
  });

  it('is completed with the refusal (isError, policy_denied) when a person rejects it; nothing was created', async () => {
    const taskId = await heldCall('Tarea Rechazada');
    expect((await sys.invoke('approvals.decide', { id: taskId, decision: 'reject', reason: 'No hace falta' }, personKey)).status).toBe(200);
    const done = await rpc('tasks/get', { taskId });
    expect(done.result).toMatchObject({ status: 'completed', result: { isError: true, structuredContent: { code: 'policy_denied' } } });
    expect(await partiesNamed('Tarea Rechazada')).toBe(0);
  });

  it('is cancelled by tasks/cancel: the pending approval is withdrawn, and approving it afterwards runs nothing', async () => {
    const taskId = await heldCall('Tarea Cancelada');
    expect((await rpc('tasks/cancel', { taskId })).result).toMatchObject({ resultType: 'complete' });
    expect((await rpc('tasks/get', { taskId })).result).toMatchObject({ status: 'cancelled' });
    const late = await sys.invoke('approvals.decide', { id: taskId, decision: 'approve' }, personKey);
    expect(late.body).toMatchObject({ code: 'conflict' });
    expect((await sys.output('approvals.get', { id: taskId }, ownerKey)).approval.status).toBe('withdrawn');
    expect(await partiesNamed('Tarea Cancelada')).toBe(0);
  });

  it('answers today\'s pending_approval result to a client that did not declare the extension, and refuses it tasks/* with -32021', async () => {
    const call = await rpc('tools/call', { name: 'parties.create', arguments: { name: 'Sin Extension', kind: 'customer' } }, { tasks: false });
    expect(call.result).toMatchObject({ structuredContent: { status: 'pending_approval', approval_id: expect.stringMatching(/^apr_/) } });
    expect(call.result.resultType).not.toBe('task');
    const get = await rpc('tasks/get', { taskId: call.result.structuredContent.approval_id }, { tasks: false });
    expect(get.error).toMatchObject({ code: -32021, data: { requiredCapabilities: { extensions: { [TASKS]: {} } } } });
  });

  it('seals a task to its caller: another credential, or an unknown id, is "task not found" (-32602)', async () => {
    const taskId = await heldCall('Tarea Ajena');
    expect((await rpc('tasks/get', { taskId }, { key: ownerKey })).error).toMatchObject({ code: -32602 });
    expect((await rpc('tasks/cancel', { taskId }, { key: ownerKey })).error).toMatchObject({ code: -32602 });
    expect((await rpc('tasks/get', { taskId: 'apr_doesnotexist' })).error).toMatchObject({ code: -32602 });
    expect((await rpc('tasks/get', { taskId })).result.status).toBe('input_required');
  });
});
