import { readFileSync, readdirSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { connectDatabase, createLogger, Ledger, LedgerSigner, signAgentRunAssertion, systemEventsFor } from '@cuadra/shared';
import { noteOverdueInvoices } from '../subgraphs/invoices/src/modules/invoices/overdue.ts';
import { dayOffset } from './helpers/canvas.ts';
import { axeProblems, openBrowser, pageWatching, SHOTS } from './helpers/browser.ts';
import { claimCodeFor, uniqueAddress } from './helpers/mail.ts';
import { FormAgent, formFields } from './helpers/oauth.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestMcpServer } from './helpers/mcp-server.ts';
import { startScriptedModel } from './helpers/scripted-model.ts';
import { OWN_SYSTEM_SETTINGS, startTestSystem, testPoolSpans, type TestSystem } from './helpers/system.ts';
import { EVENT_WAIT_MS, until } from './helpers/until.ts';

// Issue 37, the protocol tests: an agent's runs against an OpenAI-compatible model written in this
// file (the scripted model answers by conversation and step over real HTTP), every tool call going
// through the one pipeline as the agent. This file kills and restarts the agents subgraph, so it is
// lent a system of its own, with the settings the crash-test files share (OWN_SYSTEM_SETTINGS).

let sys: TestSystem;
let model: Awaited<ReturnType<typeof startScriptedModel>>;
let mcp: Awaited<ReturnType<typeof startTestMcpServer>>;
const MCP_TOKEN = 'mcp-bearer-token-0123456789abcdef';
const MODEL_KEY = 'sk-scripted-provider-key-9f8e7d6c5b4a';

beforeAll(async () => {
  [model, mcp] = await Promise.all([startScriptedModel(), startTestMcpServer(MCP_TOKEN)]);
  // The settings the crash-test files share (a lent system): no quota in the way, the tests' model and
  // MCP servers reachable on loopback, a dead process's run and its in-flight action taken over within
  // seconds (30 s and 60 s by default), ledger triggers every 0.4 s, spans exported to the test pool's
  // OTLP receiver (what the agents service does when a collector is configured).
  sys = await startTestSystem('agentruns', OWN_SYSTEM_SETTINGS);
}, 180_000);

afterAll(async () => {
  await sys?.stop();
  await Promise.all([model?.close(), mcp?.close()]);
});

/** The invoke of a tool that must answer 200: its output. */
async function ok(tool: string, input: unknown, key: string): Promise<any> {
  const r = await sys.invoke(tool, input, key);
  expect(r.status, `${tool}: ${JSON.stringify(r.body)}`).toBe(200);
  return r.body.output;
}

/** Waits until the run reaches one of `statuses` (the runtime works in the background). */
async function runUntil(runId: string, key: string, statuses: string[], timeoutMs = 60_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  let run: any;
  while (Date.now() < deadline) {
    run = (await ok('agent_runs.get', { id: runId }, key)).run;
    if (statuses.includes(run.status)) return run;
    await new Promise((r) => setTimeout(r, 150));
  }
  throw new Error(`run ${runId} is ${run?.status}, not ${statuses.join('|')}: ${JSON.stringify(run)}`);
}

/** A workspace with an owner key, a project, and the scripted model as an ai_model. */
async function workspace(name: string) {
  const ws = await sys.workspace(name);
  const key = ws.api_key;
  const project = (await ok('projects.create', { name: 'Cobranza', key: 'COB' }, key)).project;
  const aiModel = (await ok('ai_models.create', {
    name: 'Scripted', base_url: model.url, model: 'scripted-1', api_key: MODEL_KEY, prices: { input: 300, output: 1200 }, context_size: 16_000, max_output_tokens: 64,
  }, key)).ai_model;
  return { ...ws, key, project, aiModel };
}

/** The ledger entries of a run, oldest first. */
async function runLedger(runId: string, key: string): Promise<any[]> {
  return (await ok('ledger.list', { run: runId, limit: 200 }, key)).rows.reverse();
}

// These suites, through the refusals', run concurrently (with each other and within): most of their
// tests wait on the runtime's clocks (a 10 s working-time limit, schedules, ledger triggers, retries),
// and each keeps to a workspace, an agent and a scripted conversation of its own. The suite that kills
// the agents subgraph runs after them, alone (the last in the file).
describe.concurrent('agent runs through the one pipeline (scripted OpenAI-compatible model)', () => {
  it('tool call → held → approved → resumed → final: each call as the agent, with the run id and a run+step key; usage and spans recorded', async () => {
    const w = await workspace('Held SAS');
    await ok('policies.create', { name: 'Tareas de agentes con aprobación', priority: 10, match: { tools: ['tasks.create'], actors: ['agent'] }, effect: 'hold' }, w.key);
    const agent = (await ok('agents.create', {
      name: 'Cobranza', model: w.aiModel.id, instructions: 'Recuerda las facturas vencidas.', tools: ['invoices.list', 'tasks.create'],
      tool_values: { 'tasks.create': { project_id: w.project.id } },
    }, w.key)).agent;
    expect(agent.principal).toEqual({ role: 'agent', actor: { type: 'agent', id: agent.id }, patterns: ['invoices.list', 'tasks.create'] });
    model.script('held', [
      { tool_calls: [{ name: 'invoices__list', arguments: { overdue: true } }] },
      // The model tries to move the task to another project: the agent's fixed value wins.
      { tool_calls: [{ name: 'tasks__create', arguments: { title: 'Llamar a Tienda Andina', project_id: 'prj_elsewhere' } }] },
      { content: 'Listo: tarea creada.' },
    ]);
    const started = (await ok('agents.run', { agent_id: agent.id, input: '[held] Revisa las facturas vencidas y crea un recordatorio.' }, w.key)).run;
    expect(started.status).toBe('queued');

    const waiting = await runUntil(started.id, w.key, ['waiting_approval']);
    expect(waiting.waiting).toMatchObject({ step: 2, tool: 'tasks.create' });
    const approvalId = waiting.waiting.approval_id;
    // Nothing was created while the call waits for a person.
    expect((await ok('tasks.list', { project_id: w.project.id }, w.key)).rows).toHaveLength(0);
    const approval = (await ok('approvals.get', { id: approvalId }, w.key)).approval;
    expect(approval).toMatchObject({ status: 'pending', tool: 'tasks.create', input: { title: 'Llamar a Tienda Andina', project_id: w.project.id }, requested_by: { type: 'agent', id: agent.id } });

    // Only a person decides (the workspace's operator key has none behind it): an admin with a key they made.
    const admin = await sys.person(w.workspace_id, 'admin', 'Aprobadora');
    await ok('approvals.decide', { id: approvalId, decision: 'approve' }, admin.api_key);
    const done = await runUntil(started.id, w.key, ['succeeded', 'failed']);
    expect(done).toMatchObject({ status: 'succeeded', stop_reason: 'completed', output: 'Listo: tarea creada.', waiting: null });
    expect(done.steps.map((s: any) => s.calls.map((c: any) => [c.tool, c.status, c.idempotency_key]))).toEqual([
      [['invoices.list', 'done', `${started.id}:s1:c0`]],
      [['tasks.create', 'done', `${started.id}:s2:c0`]],
      [],
    ]);
    const tasks = (await ok('tasks.list', { project_id: w.project.id }, w.key)).rows;
    expect(tasks.map((t: any) => t.title)).toEqual(['Llamar a Tienda Andina']);

    // The ledger: every call of the run as the agent, with the run's id and the run+step key.
    const entries = await runLedger(started.id, w.key);
    expect(entries.map((e) => [e.tool, e.outcome, e.idempotency_key ?? null])).toEqual([
      ['invoices.list', 'ok', `${started.id}:s1:c0`],
      ['tasks.create', 'pending_approval', `${started.id}:s2:c0`],
      ['tasks.create', 'ok', `${started.id}:s2:c0`],
    ]);
    for (const e of entries) {
      expect(e.actor).toEqual({ type: 'agent', id: agent.id });
      expect(e.credential_id).toBe(`agent:${agent.id}`);
      expect(e.run_id).toBe(started.id);
    }
    expect(entries[2].approval_id).toBe(approvalId);
    expect((await ok('ledger.verify', {}, w.key)).ok).toBe(true);

    // What the model was sent: the provider's key as the bearer, tool results in `tool` messages as data.
    const sent = model.requests.filter((r) => r.tag === 'held');
    expect(sent.map((r) => r.step)).toEqual([0, 1, 2]);
    for (const r of sent) expect(r.authorization).toBe(`Bearer ${MODEL_KEY}`);
    const toolMessages = sent[2].body.messages.filter((m: any) => m.role === 'tool');
    expect(toolMessages).toHaveLength(2);
    expect(JSON.parse(toolMessages[0].content)).toMatchObject({ tool: 'invoices.list', status: 'done', data: { rows: [] } });
    expect(JSON.parse(toolMessages[1].content)).toMatchObject({ tool: 'tasks.create', status: 'done', data: { task: { title: 'Llamar a Tienda Andina' } } });
    expect(sent[0].body.messages[0]).toMatchObject({ role: 'system' });
    expect(sent[0].body.messages[0].content).toContain('never instructions');
    // The fixed project is not offered to the model at all.
    const offered = sent[0].body.tools.find((t: any) => t.function.name === 'tasks__create');
    expect(Object.keys(offered.function.parameters.properties)).not.toContain('project_id');

    // Usage: three calls of 100 input and 20 output tokens at 300 and 1,200 cents per million:
    // 3 × (100 × 300 + 20 × 1,200) = 3 × 54,000 = 162,000 millionths of a cent.
    expect(done.usage).toEqual({ input_tokens: 300, output_tokens: 60, cached_tokens: 0, cost_micros: 162_000 });
    // Spans: one chat per step, one execute_tool per call, each under the run's trace.
    const names = done.spans.map((s: any) => s.name);
    expect(names.filter((n: string) => n === 'chat')).toHaveLength(3);
    expect(names.filter((n: string) => n === 'execute_tool')).toHaveLength(2);
    expect(names).toContain('invoke_agent');
    for (const s of done.spans) expect(s.trace_id).toBe(done.trace_id);
    const chat = done.spans.find((s: any) => s.name === 'chat');
    expect(chat.attributes).toMatchObject({ 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'scripted-1', 'gen_ai.usage.input_tokens': 100, 'gen_ai.usage.output_tokens': 20, 'gen_ai.conversation.id': started.id });
    const tool = done.spans.find((s: any) => s.name === 'execute_tool');
    expect(tool.attributes).toMatchObject({ 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'invoices.list', 'gen_ai.agent.id': agent.id });
    // The same spans reached the configured OTLP collector (batched: within a few seconds).
    const exported = await until(() => testPoolSpans(done.trace_id), (e) => e.filter((s) => s.name === 'chat').length >= 3, EVENT_WAIT_MS, 200);
    expect(exported.filter((s) => s.name === 'chat')).toHaveLength(3);
    expect(exported.find((s) => s.name === 'chat')!.attributes).toMatchObject({ 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'scripted-1', 'gen_ai.usage.input_tokens': 100 });
    // No prompt, answer or argument goes into a span.
    expect(JSON.stringify(exported)).not.toContain('Llamar a Tienda Andina');
  }, 120_000);

  it('a tool refused by policy is a 403 the model reads as data; a tool the agent is not offered never reaches the pipeline', async () => {
    const w = await workspace('Denied SAS');
    await ok('policies.create', { name: 'Sin publicar', priority: 10, match: { tools: ['invoices.post'] }, effect: 'deny' }, w.key);
    const agent = (await ok('agents.create', { name: 'Contador', model: w.aiModel.id, tools: ['invoices.%'] }, w.key)).agent;
    model.script('denied', [
      { tool_calls: [{ name: 'invoices__post', arguments: { id: 'inv_whatever' } }, { name: 'policies__create', arguments: { name: 'x', priority: 1, match: {}, effect: 'allow' } }] },
      { content: 'No pude publicarla.' },
    ]);
    const started = (await ok('agents.run', { agent_id: agent.id, input: '[denied] Publica la factura.' }, w.key)).run;
    const done = await runUntil(started.id, w.key, ['succeeded', 'failed']);
    expect(done.status).toBe('succeeded');
    const [post, policy] = done.steps[0].calls;
    expect(post).toMatchObject({ tool: 'invoices.post', status: 'refused', http_status: 403 });
    expect(JSON.parse(post.result)).toMatchObject({ status: 'refused', data: { code: 'policy_denied' } });
    expect(policy).toMatchObject({ name: 'policies__create', status: 'refused', http_status: 422 });
    expect(JSON.parse(policy.result).data.code).toBe('unknown_tool');
    const entries = await runLedger(started.id, w.key);
    expect(entries.map((e) => [e.tool, e.outcome])).toEqual([['invoices.post', 'policy_denied']]);
    // The refusal reached the model as a tool message.
    const second = model.requests.find((r) => r.tag === 'denied' && r.step === 1)!;
    expect(second.body.messages.filter((m: any) => m.role === 'tool').map((m: any) => JSON.parse(m.content).data.code)).toEqual(['policy_denied', 'unknown_tool']);
  }, 60_000);

  it('the agent cannot change its own permissions, policies or budget: its principal reaches none of those tools', async () => {
    const w = await workspace('Fence SAS');
    const agent = (await ok('agents.create', { name: 'Todo', model: w.aiModel.id, tools: ['%'] }, w.key)).agent;
    // A run assertion as the agents service signs it (the agent's own principal, widest patterns).
    const assertion = signAgentRunAssertion({ workspace: w.workspace_id, agent: agent.id, run: 'run_fence', patterns: ['%'] }, sys.serviceKeys.privateKey);
    const attempts: [string, unknown][] = [
      ['policies.create', { name: 'todo permitido', priority: 99, match: {}, effect: 'allow' }],
      ['policies.delete', { id: 'pol_x' }],
      ['agents.update', { id: agent.id, budget: { daily_tokens: null } }],
      ['agents.create', { name: 'otro', model: 'embedded', tools: ['%'] }],
      ['agents.run', { agent_id: agent.id, input: 'again' }],
      ['approvals.decide', { id: 'apr_x', decision: 'approve' }],
      ['api_keys.create', { name: 'k', role: 'owner' }],
      ['roles.create', { name: 'super', patterns: ['%'] }],
      ['members.invite', { email: 'x@example.com', role: 'owner' }],
      ['ai_models.update', { id: w.aiModel.id, name: 'x' }],
      ['connections.create', { name: 'c', service: 's', kind: 'api_key', api_key: 'k' }],
    ];
    for (const [tool, input] of attempts) {
      const r = await sys.fetch(`/v1/tools/${tool}:invoke`, { headers: { authorization: `Bearer ${assertion}` }, body: input });
      expect([tool, r.status, r.body.code]).toEqual([tool, 403, 'policy_denied']);
    }
    // Reads it does reach (role agent: %:read), and never a secret: the model's key is not shown.
    const models = await sys.fetch('/v1/tools/ai_models.get:invoke', { headers: { authorization: `Bearer ${assertion}` }, body: { id: w.aiModel.id } });
    expect(models.status).toBe(200);
    expect(JSON.stringify(models.body)).not.toContain(MODEL_KEY);
    // A forged assertion (another key) is refused at authentication.
    const forged = signAgentRunAssertion({ workspace: w.workspace_id, agent: agent.id, run: 'run_x', patterns: ['%'] }, sys.keys.privateKey);
    expect((await sys.fetch('/v1/tools/invoices.list:invoke', { headers: { authorization: `Bearer ${forged}` }, body: {} })).status).toBe(401);
  }, 60_000);

  it('an agent acts under its workspace\'s country, as every caller does: a Dutch workspace\'s agent invoices at 21 % VAT', async () => {
    const dutch = await sys.identity.createWorkspace({ name: 'Jansen Agenten B.V.', ownerEmail: 'eigenaar@jansen-agenten.example', country: 'NL' });
    const customer = (await ok('parties.create', { name: 'Klant B.V.', kind: 'customer' }, dutch.api_key)).party;
    const agent = (await ok('agents.create', { name: 'Facturen', model: 'embedded', tools: ['invoices.create'] }, dutch.api_key)).agent;
    const assertion = signAgentRunAssertion({ workspace: dutch.workspace_id, agent: agent.id, run: 'run_dutch', patterns: ['invoices.create'] }, sys.serviceKeys.privateKey);
    const made = await sys.fetch('/v1/tools/invoices.create:invoke', {
      headers: { authorization: `Bearer ${assertion}` },
      body: { customer_id: customer.id, currency: 'EUR', lines: [{ description: 'Advies', quantity: 2, unit_price: 9500, tax_rate_ppm: 210000 }] },
    });
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    // 2 × 95.00 = 190.00; VAT 21 % = 39.90; 229.90.
    expect(made.body.output.invoice).toMatchObject({ subtotal: 19000, tax_total: 3990, total: 22990 });
  }, 60_000);

  it('budget exhausted: the run stops before the call that would pass it, with status failed and reason budget_exhausted', async () => {
    const w = await workspace('Budget SAS');
    const agent = (await ok('agents.create', { name: 'Gastón', model: w.aiModel.id, tools: ['invoices.list'], budget: { daily_tokens: 8_000 } }, w.key)).agent;
    // Each answer reports 5,000 + 1,000 tokens; a call reserves its prompt estimate and 64 output tokens first.
    // Step 1: 0 + ~600 ≤ 8,000 → 6,000 used. Step 2: 6,000 + ~650 ≤ 8,000 → 12,000. Step 3: 12,000 + … > 8,000 → stop.
    const big = { prompt_tokens: 5_000, completion_tokens: 1_000 };
    model.script('budget', [
      { tool_calls: [{ name: 'invoices__list', arguments: {} }], usage: big },
      { tool_calls: [{ name: 'invoices__list', arguments: { limit: 1 } }], usage: big },
      { content: 'never reached', usage: big },
    ]);
    const started = (await ok('agents.run', { agent_id: agent.id, input: '[budget] Lista.' }, w.key)).run;
    const done = await runUntil(started.id, w.key, ['succeeded', 'failed', 'timed_out']);
    expect(done).toMatchObject({ status: 'failed', stop_reason: 'budget_exhausted' });
    expect(done.steps).toHaveLength(2);
    expect(model.requests.filter((r) => r.tag === 'budget')).toHaveLength(2);
    // The same day, the next run of this agent stops before its first call.
    const again = (await ok('agents.run', { agent_id: agent.id, input: '[budget2] Otra vez.' }, w.key)).run;
    const stopped = await runUntil(again.id, w.key, ['succeeded', 'failed']);
    expect(stopped).toMatchObject({ status: 'failed', stop_reason: 'budget_exhausted', steps: [] });
    expect(model.requests.filter((r) => r.tag === 'budget2')).toHaveLength(0);
  }, 60_000);

  it('limits: max steps stops the run failed (max_steps) before another model call; a model silent past the working time ends it timed_out (max_time)', async () => {
    const w = await workspace('Limits SAS');
    const looping = (await ok('agents.create', { name: 'En bucle', model: w.aiModel.id, tools: ['invoices.list'], limits: { max_steps: 2 } }, w.key)).agent;
    model.script('steps', [
      { tool_calls: [{ name: 'invoices__list', arguments: {} }] },
      { tool_calls: [{ name: 'invoices__list', arguments: { limit: 1 } }] },
      { content: 'never asked' },
    ]);
    const r1 = (await ok('agents.run', { agent_id: looping.id, input: '[steps] Lista sin parar.' }, w.key)).run;
    const stepped = await runUntil(r1.id, w.key, ['succeeded', 'failed', 'timed_out']);
    expect(stepped).toMatchObject({ status: 'failed', stop_reason: 'max_steps', limits: { max_steps: 2 } });
    expect(stepped.steps.map((s: any) => s.calls.map((c: any) => c.status))).toEqual([['done'], ['done']]);
    expect(model.requests.filter((r) => r.tag === 'steps')).toHaveLength(2);

    // 10 s of working time (the least allowed); the model holds its answer past it.
    const slow = (await ok('agents.create', { name: 'Sin prisa', model: w.aiModel.id, tools: ['invoices.list'], limits: { max_seconds: 10 } }, w.key)).agent;
    model.script('slow', [{ content: 'too late', hold: true }]);
    const r2 = (await ok('agents.run', { agent_id: slow.id, input: '[slow] Piensa.' }, w.key)).run;
    const timed = await runUntil(r2.id, w.key, ['succeeded', 'failed', 'timed_out'], 40_000);
    model.release('slow', 0);
    expect(timed).toMatchObject({ status: 'timed_out', stop_reason: 'max_time', steps: [], output: null });
    expect(timed.active_ms).toBeGreaterThanOrEqual(10_000);
    // No tokens were recorded for the answer that never came.
    expect(timed.usage).toEqual({ input_tokens: 0, output_tokens: 0, cached_tokens: 0, cost_micros: 0 });
  }, 90_000);

  it('an answer cut at its largest size, or one that skips the call its procedure names, ends the run failed (model_error), not succeeded', async () => {
    const w = await workspace('Cut SAS');
    const agent = (await ok('agents.create', { name: 'Cortada', model: w.aiModel.id, tools: ['invoices.list'] }, w.key)).agent;
    model.script('cut', [{ content: '{"name":"invoices__list","argum', finish: 'length' }]);
    const r1 = (await ok('agents.run', { agent_id: agent.id, input: '[cut] Lista.' }, w.key)).run;
    const cut = await runUntil(r1.id, w.key, ['succeeded', 'failed', 'timed_out']);
    expect(cut).toMatchObject({ status: 'failed', stop_reason: 'model_error', output: null });
    expect(cut.error).toContain('cut');
    // Its tokens were spent and are counted: 100 × 300 + 20 × 1,200 = 54,000.
    expect(cut.usage.cost_micros).toBe(54_000);

    const procedural = (await ok('agents.create', { name: 'Con procedimiento', model: w.aiModel.id, tools: ['invoices.list'], procedure: ['invoices.list'] }, w.key)).agent;
    model.script('skip', [{ content: 'Ya está.' }]);
    const r2 = (await ok('agents.run', { agent_id: procedural.id, input: '[skip] Lista.' }, w.key)).run;
    const skipped = await runUntil(r2.id, w.key, ['succeeded', 'failed', 'timed_out']);
    expect(skipped).toMatchObject({ status: 'failed', stop_reason: 'model_error', output: null });
    expect(skipped.error).toContain('invoices.list');
    // The model was told to call it.
    expect(model.requests.find((r) => r.tag === 'skip')!.body.tool_choice).toEqual({ type: 'function', function: { name: 'invoices__list' } });
  }, 60_000);

  it('a provider that is busy (429, 5xx) is asked again later, nothing counted twice; one that refuses the request (401) ends the run failed (model_error)', async () => {
    const w = await workspace('Busy SAS');
    const agent = (await ok('agents.create', { name: 'Insistente', model: w.aiModel.id, tools: ['invoices.list'] }, w.key)).agent;
    model.script('busy', [
      { tool_calls: [{ name: 'invoices__list', arguments: {} }], fail: 503 },
      { content: 'Hecho.', fail: 429 },
    ]);
    const r1 = (await ok('agents.run', { agent_id: agent.id, input: '[busy] Lista.' }, w.key)).run;
    const done = await runUntil(r1.id, w.key, ['succeeded', 'failed', 'timed_out']);
    expect(done).toMatchObject({ status: 'succeeded', output: 'Hecho.' });
    expect(model.requests.filter((r) => r.tag === 'busy').map((r) => r.step)).toEqual([0, 0, 1, 1]);
    expect(done.steps).toHaveLength(2);
    // Only the answers are counted: 2 × (100 × 300 + 20 × 1,200) = 108,000.
    expect(done.usage).toEqual({ input_tokens: 200, output_tokens: 40, cached_tokens: 0, cost_micros: 108_000 });
    expect((await runLedger(r1.id, w.key)).map((e) => e.tool)).toEqual(['invoices.list']);

    model.script('refused', [{ content: 'never', fail: 401 }]);
    const r2 = (await ok('agents.run', { agent_id: agent.id, input: '[refused] Lista.' }, w.key)).run;
    const failed = await runUntil(r2.id, w.key, ['succeeded', 'failed', 'timed_out']);
    expect(failed).toMatchObject({ status: 'failed', stop_reason: 'model_error', steps: [] });
    expect(failed.error).toContain('401');
    expect(model.requests.filter((r) => r.tag === 'refused')).toHaveLength(1);
  }, 60_000);

  it('a model\'s requests-per-minute limit makes the run wait for the next minute, without calling the model', async () => {
    const w = await workspace('Minute SAS');
    const slow = (await ok('ai_models.create', { name: 'Uno por minuto', base_url: model.url, model: 'scripted-1', prices: { input: 1, output: 1 }, context_size: 16_000, max_output_tokens: 64, requests_per_minute: 1 }, w.key)).ai_model;
    const agent = (await ok('agents.create', { name: 'Paciente', model: slow.id, tools: ['invoices.list'] }, w.key)).agent;
    model.script('rpm', [{ tool_calls: [{ name: 'invoices__list', arguments: {} }] }, { content: 'listo' }]);
    // Far enough from a minute's end that the second call cannot fall into the next minute by chance.
    while (new Date().getUTCSeconds() > 45) await new Promise((r) => setTimeout(r, 500));
    const started = (await ok('agents.run', { agent_id: agent.id, input: '[rpm] Lista.' }, w.key)).run;
    let run: any;
    for (let i = 0; i < 60; i++) {
      await new Promise((r) => setTimeout(r, 200));
      run = (await ok('agent_runs.get', { id: started.id }, w.key)).run;
      if (run.steps.length === 1 && run.steps[0].calls[0].status === 'done' && run.status === 'queued') break;
    }
    expect(run).toMatchObject({ status: 'queued', stop_reason: null });
    expect(run.steps).toHaveLength(1);
    expect(model.requests.filter((r) => r.tag === 'rpm')).toHaveLength(1);
    await ok('agent_runs.cancel', { id: started.id }, w.key);
  }, 60_000);

  it('a cancelled run rejects the call it held, which then never runs', async () => {
    const w = await workspace('Cancel SAS');
    await ok('policies.create', { name: 'Retener', priority: 10, match: { tools: ['tasks.create'] }, effect: 'hold' }, w.key);
    const agent = (await ok('agents.create', { name: 'Cancelado', model: w.aiModel.id, tools: ['tasks.create'], tool_values: { 'tasks.create': { project_id: w.project.id } } }, w.key)).agent;
    model.script('cancel', [{ tool_calls: [{ name: 'tasks__create', arguments: { title: 'No debe existir' } }] }, { content: 'x' }]);
    const started = (await ok('agents.run', { agent_id: agent.id, input: '[cancel] Crea.' }, w.key)).run;
    const waiting = await runUntil(started.id, w.key, ['waiting_approval']);
    const cancelled = (await ok('agent_runs.cancel', { id: started.id }, w.key)).run;
    expect(cancelled).toMatchObject({ status: 'cancelled', stop_reason: 'cancelled' });
    expect((await ok('approvals.get', { id: waiting.waiting.approval_id }, w.key)).approval.status).toBe('rejected');
    const admin = await sys.person(w.workspace_id, 'admin', 'Tardía');
    const late = await sys.invoke('approvals.decide', { id: waiting.waiting.approval_id, decision: 'approve' }, admin.api_key);
    expect([late.status, late.body.code]).toEqual([409, 'conflict']);
    await new Promise((r) => setTimeout(r, 1500));
    expect((await ok('tasks.list', { project_id: w.project.id }, w.key)).rows).toHaveLength(0);
    const again = await sys.invoke('agent_runs.cancel', { id: started.id }, w.key);
    expect([again.status, again.body.code]).toEqual([409, 'conflict']);
    const missing = await sys.invoke('agent_runs.cancel', { id: 'run_missing' }, w.key);
    expect([missing.status, missing.body.code]).toEqual([404, 'not_found']);
  }, 60_000);

  it('an outside MCP server: tools listed and namespaced, each call through the pipeline; a secret it returns never reaches the prompt, the run or a log', async () => {
    const w = await workspace('MCP SAS');
    const connection = (await ok('connections.create', { name: 'Archivos', service: 'files MCP', kind: 'api_key', api_key: MCP_TOKEN, scopes: ['files.read'] }, w.key)).connection;
    expect(JSON.stringify(connection)).not.toContain(MCP_TOKEN);
    const server = (await ok('mcp_servers.connect', { name: 'Archivos', key: 'files', url: mcp.url, connection_id: connection.id }, w.key)).mcp_server;
    expect(server.tools.map((t: any) => [t.pattern, t.read_only])).toEqual([['mcp.files.lookup_customer', true], ['mcp.files.slow_note', false]]);
    expect(server.server_info).toEqual({ name: 'test-files', version: '1.2.3' });
    const agent = (await ok('agents.create', { name: 'Buscador', model: w.aiModel.id, tools: ['mcp.files.lookup_customer'] }, w.key)).agent;
    model.script('mcp', [
      { tool_calls: [{ name: 'mcp__files__lookup_customer', arguments: { email: 'compras@andina.co' } }] },
      { tool_calls: [{ name: 'mcp__files__slow_note', arguments: { text: 'not offered' } }] },
      { content: 'Encontrado.' },
    ]);
    const started = (await ok('agents.run', { agent_id: agent.id, input: '[mcp] Busca al cliente.' }, w.key)).run;
    const done = await runUntil(started.id, w.key, ['succeeded', 'failed']);
    expect(done.status).toBe('succeeded');
    expect(done.steps[0].calls[0]).toMatchObject({ tool: 'mcp_servers.call', name: 'mcp__files__lookup_customer', status: 'done', arguments: { server_id: server.id, tool: 'lookup_customer', arguments: { email: 'compras@andina.co' } } });
    // slow_note is not in the agent's patterns: not offered, never called.
    expect(done.steps[1].calls[0]).toMatchObject({ status: 'refused' });
    expect(mcp.calls.map((c) => c.tool)).toEqual(['lookup_customer']);
    const entries = await runLedger(started.id, w.key);
    expect(entries.map((e) => [e.tool, e.outcome, e.risk])).toEqual([['mcp_servers.call', 'ok', 'external']]);
    // The secret fields of the outside record: redacted before the model, the run record and the logs.
    const record = JSON.stringify(done);
    expect(record).toContain('[redacted]');
    for (const secret of ['sk-live-0123456789abcdefSECRET', 'hunter2-portal', MCP_TOKEN, MODEL_KEY]) {
      expect(record).not.toContain(secret);
      for (const r of model.requests) expect(JSON.stringify(r.body)).not.toContain(secret);
    }
    const logs = path.join(process.env.CUADRA_TEST_OUTPUT ?? path.join(process.cwd(), 'test-output'), 'logs');
    for (const folder of readdirSync(logs).filter((f) => f.includes('agentruns'))) {
      for (const file of readdirSync(path.join(logs, folder))) {
        const text = readFileSync(path.join(logs, folder, file), 'utf8');
        for (const secret of ['sk-live-0123456789abcdefSECRET', 'hunter2-portal', MCP_TOKEN, MODEL_KEY]) expect(text).not.toContain(secret);
      }
    }
    // The tool itself refuses what the server does not list, and a server that is not connected.
    const unknown = await sys.invoke('mcp_servers.call', { server_id: server.id, tool: 'drop_tables' }, w.key);
    expect([unknown.status, unknown.body.field]).toEqual([422, '/tool']);
    const bad = await sys.invoke('mcp_servers.connect', { name: 'Otro', key: 'other', url: mcp.url, connection_id: 'con_missing' }, w.key);
    expect([bad.status, bad.body.field]).toEqual([422, '/connection_id']);
    const taken = await sys.invoke('mcp_servers.connect', { name: 'Otra vez', key: 'files', url: mcp.url, connection_id: connection.id }, w.key);
    expect([taken.status, taken.body.code]).toEqual([409, 'conflict']);
    // Without the connection's credential the outside server refuses the session: unavailable, nothing kept.
    const noAuth = await sys.invoke('mcp_servers.connect', { name: 'Sin clave', key: 'noauth', url: mcp.url }, w.key);
    expect([noAuth.status, noAuth.body.code]).toEqual([503, 'unavailable']);
  }, 60_000);
});

describe.concurrent('connections', () => {
  it('an OAuth grant is refreshed once before it expires, even by two users at once; the rotated tokens are kept sealed', async () => {
    const w = await workspace('OAuth SAS');
    // The outside provider's token endpoint (RFC 6749 §6): refresh tokens rotate, and a used one is refused.
    const issued = { refreshes: 0, valid: new Set(['refresh-1']), access: new Set<string>() };
    const tokenServer = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
      const json = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(JSON.stringify(body));
      if (form.get('grant_type') !== 'refresh_token' || form.get('client_id') !== 'cuadra-client' || form.get('client_secret') !== 'client-secret-xyz') return json(401, { error: 'invalid_client' });
      const presented = form.get('refresh_token') ?? '';
      if (!issued.valid.delete(presented)) return json(400, { error: 'invalid_grant' });
      issued.refreshes += 1;
      const access = `fresh-access-${issued.refreshes}`;
      issued.access.add(access);
      issued.valid.add(`refresh-${issued.refreshes + 1}`);
      return json(200, { access_token: access, token_type: 'Bearer', expires_in: 3600, refresh_token: `refresh-${issued.refreshes + 1}` });
    });
    await new Promise<void>((resolve) => tokenServer.listen(0, '127.0.0.1', resolve));
    const protectedMcp = await startTestMcpServer((t) => issued.access.has(t));
    try {
      const connection = (await ok('connections.create', {
        name: 'Drive', service: 'files', kind: 'oauth2', access_token: 'stale-access-0', expires_in: 1, refresh_token: 'refresh-1',
        token_url: `http://127.0.0.1:${(tokenServer.address() as AddressInfo).port}/token`, client_id: 'cuadra-client', client_secret: 'client-secret-xyz', scopes: ['files.read'],
      }, w.key)).connection;
      expect(connection).toMatchObject({ kind: 'oauth2', refreshable: true, scopes: ['files.read'] });
      // Two servers connected at once: both need the token; one refresh serves both.
      const [a, b] = await Promise.all(['uno', 'dos'].map((key) => sys.invoke('mcp_servers.connect', { name: `Drive ${key}`, key, url: protectedMcp.url, connection_id: connection.id }, w.key)));
      expect([a.status, b.status], JSON.stringify([a.body, b.body])).toEqual([200, 200]);
      expect(issued.refreshes).toBe(1);
      const after = (await ok('connections.list', {}, w.key)).rows.find((c: any) => c.id === connection.id);
      expect(after.last_refreshed_at).not.toBeNull();
      expect(JSON.stringify(after)).not.toMatch(/fresh-access|refresh-2|client-secret/);
      // Revoked: nothing can use it any more.
      await ok('connections.revoke', { id: connection.id }, w.key);
      const refused = await sys.invoke('mcp_servers.connect', { name: 'Drive tres', key: 'tres', url: protectedMcp.url, connection_id: connection.id }, w.key);
      expect([refused.status, refused.body.field]).toEqual([422, '/connection_id']);
    } finally {
      await protectedMcp.close();
      tokenServer.closeAllConnections();
      await new Promise<void>((resolve) => tokenServer.close(() => resolve()));
    }
  }, 60_000);
});

describe.concurrent('triggers', () => {
  it('a ledger trigger starts one run per matching action of a person, never for an agent\'s own; a schedule starts runs until the agent is archived', async () => {
    const w = await workspace('Trigger SAS');
    const greeter = (await ok('agents.create', {
      name: 'Bienvenida', model: w.aiModel.id, tools: ['parties.get'], trigger: { kind: 'ledger', tools: ['parties.create'], input: '[trig] Un cliente nuevo.' },
    }, w.key)).agent;
    expect(greeter.trigger).toEqual({ kind: 'ledger', tools: ['parties.create'], outcome: 'ok', input: '[trig] Un cliente nuevo.' });
    const maker = (await ok('agents.create', { name: 'Creador', model: w.aiModel.id, tools: ['parties.create'] }, w.key)).agent;
    model.script('trig', [{ content: 'Bienvenido.' }]);
    model.script('mk', [{ tool_calls: [{ name: 'parties__create', arguments: { name: 'Hecho por un agente', kind: 'customer' } }] }, { content: 'hecho' }]);
    // The agent's position on the chain is taken when it is created (agents.create): nothing before it is replayed.
    await ok('parties.create', { name: 'Cliente Nuevo SAS', kind: 'customer' }, w.key);
    const byAgent = async (agentId: string) => (await ok('agent_runs.list', { agent_id: agentId }, w.key)).rows;
    const triggered = await until(() => byAgent(greeter.id), (t) => t.length > 0, EVENT_WAIT_MS, 200);
    expect(triggered).toHaveLength(1);
    expect(triggered[0].trigger.kind).toBe('ledger');
    expect(triggered[0].input).toContain('parties.create');
    await runUntil(triggered[0].id, w.key, ['succeeded']);
    // An agent's own parties.create starts nothing.
    const made = (await ok('agents.run', { agent_id: maker.id, input: '[mk] Crea un cliente.' }, w.key)).run;
    expect((await runUntil(made.id, w.key, ['succeeded', 'failed'])).status).toBe('succeeded');
    await new Promise((r) => setTimeout(r, 1500));
    expect(await byAgent(greeter.id)).toHaveLength(1);

    model.script('tick', [{ content: 'tic' }]);
    const ticker = (await ok('agents.create', { name: 'Reloj', model: w.aiModel.id, trigger: { kind: 'schedule', cron: '*/2 * * * * *', input: '[tick] Revisa.' } }, w.key)).agent;
    const ticks = await until(() => byAgent(ticker.id), (t) => t.length >= 2, EVENT_WAIT_MS, 200);
    expect(ticks.length).toBeGreaterThanOrEqual(2);
    expect(ticks.every((r: any) => r.trigger.kind === 'schedule' && r.requested_by.type === 'agent')).toBe(true);
    // Each scheduled time starts one run: the refs are distinct instants two seconds apart.
    expect(new Set(ticks.map((r: any) => r.trigger.ref)).size).toBe(ticks.length);
    await ok('agents.archive', { id: ticker.id }, w.key);
    await new Promise((r) => setTimeout(r, 500));
    const atArchive = (await byAgent(ticker.id)).length;
    await new Promise((r) => setTimeout(r, 3000));
    expect((await byAgent(ticker.id)).length).toBe(atArchive);
  }, 240_000);
});

// Concurrent with the suites above (most of its time is the browser's, theirs the runtime's clocks).
describe.concurrent('the run page in Chromium', () => {
  it('shows a run waiting for a person: its steps, the held call with a link to the inbox, its cost (Spanish first, axe clean)', async () => {
    const person = { email: uniqueAddress('diana@tostadora.example'), password: 'tinto campesino 2026' };
    const opened = await sys.fetch('/v1/auth/agent-signup', { body: { email: person.email, workspace_name: 'Tostadora del Huila', agent_name: 'Asistente', name: 'Diana' } });
    expect(opened.status).toBe(201);
    const forms = new FormAgent(sys.gatewayUrl);
    const claim = await forms.get(opened.body.claim_url);
    expect((await forms.post('/claim', { ...formFields(claim.text), code: await claimCodeFor(person.email), name: 'Diana Rojas', password: person.password })).status).toBe(200);
    const key = (await sys.key(opened.body.workspace_id, 'owner')).api_key;
    const project = (await ok('projects.create', { name: 'Cobranza', key: 'COB' }, key)).project;
    const aiModel = (await ok('ai_models.create', { name: 'Guionado', base_url: model.url, model: 'scripted-1', prices: { input: 300, output: 1200 }, context_size: 16_000, max_output_tokens: 64 }, key)).ai_model;
    // The workspace an agent opened holds every agent's write for its owner (its default policy).
    const agent = (await ok('agents.create', { name: 'Cobradora', model: aiModel.id, tools: ['invoices.list', 'tasks.create'], tool_values: { 'tasks.create': { project_id: project.id } } }, key)).agent;
    model.script('page', [
      { tool_calls: [{ name: 'invoices__list', arguments: { overdue: true } }] },
      { tool_calls: [{ name: 'tasks__create', arguments: { title: 'Cobrar a Café Tolima <script>alert(1)</script>' } }] },
      { content: 'Tarea creada.' },
    ]);
    const started = (await ok('agents.run', { agent_id: agent.id, input: '[page] Revisa la cartera vencida.' }, key)).run;
    const waiting = await runUntil(started.id, key, ['waiting_approval']);

    const { context, close } = await openBrowser({ width: 1280, height: 900 });
    const problems: string[] = [];
    try {
      const page = await pageWatching(context, problems);
      await page.goto(`${sys.gatewayUrl}/app/agents`);
      await page.getByLabel('Correo electrónico').fill(person.email);
      await page.getByLabel('Contraseña').fill(person.password);
      await page.getByRole('button', { name: 'Iniciar sesión' }).click({ timeout: 180_000 });
      await page.waitForURL('**/app/agents', { timeout: 180_000 });
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Ejecuciones de agentes de Tostadora del Huila');
      expect(await page.locator(`#runs-table tr#${started.id} td`).first().textContent()).toBe('Esperando aprobación');
      expect(await axeProblems(page)).toEqual([]);
      await page.screenshot({ path: path.join(SHOTS, 'agent-runs-es.png'), fullPage: true });

      await page.locator(`#runs-table tr#${started.id} th a`).click();
      await page.waitForURL(`**/app/agents/runs/${started.id}**`);
      const held = page.locator('#run-waiting');
      expect(await held.textContent()).toContain('Esta ejecución espera que una persona decida la llamada a tasks.create.');
      expect(await held.getByRole('link', { name: 'Decidir en la bandeja de aprobaciones' }).getAttribute('href')).toBe(`/app/approvals?ws=${encodeURIComponent(opened.body.workspace_id)}#${waiting.waiting.approval_id}`);
      // Two model calls so far: 2 × (100 × 300 + 20 × 1,200) = 108,000 millionths of a cent = US$0.00108.
      expect(await page.locator('#run-cost strong').textContent()).toMatch(/^US\$\s0,00108$/);
      expect(await page.locator('#run-steps > li').count()).toBe(2);
      // What the model wrote is shown as text, never as markup.
      expect(await page.locator('#run-steps').textContent()).toContain('<script>alert(1)</script>');
      expect(await axeProblems(page)).toEqual([]);
      await page.screenshot({ path: path.join(SHOTS, 'agent-run-waiting-es.png'), fullPage: true });

      await ok('approvals.decide', { id: waiting.waiting.approval_id, decision: 'approve' }, (await sys.person(opened.body.workspace_id, 'admin', 'Aprobadora')).api_key);
      await runUntil(started.id, key, ['succeeded']);
      await page.goto(`${sys.gatewayUrl}/app/agents/runs/${started.id}?lang=en`);
      expect(await page.getByRole('heading', { level: 2 }).first().textContent()).toContain('Succeeded');
      expect(await page.locator('#run-output').textContent()).toBe('Tarea creada.');
      expect(await page.locator('#run-waiting').count()).toBe(0);
      expect(await axeProblems(page)).toEqual([]);
      await page.screenshot({ path: path.join(SHOTS, 'agent-run-done-en.png'), fullPage: true });
      expect(problems).toEqual([]);
    } finally {
      await close();
    }
  }, 300_000);
});

describe.concurrent('an invoice becoming overdue (a domain event on the ledger)', () => {
  it('starts one run per overdue invoice of an agent with the event trigger, and one webhook message each, even with a second sweep at once', async () => {
    const w = await workspace('Vencidas SAS');
    // What a subscribed endpoint receives (delivered over real HTTP by the agents service).
    const received: any[] = [];
    const receiver = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      received.push({ headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
      res.writeHead(204).end();
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const financeDb = await connectDatabase(process.env.MONGO_URL!, `${sys.gatewayDb.slice(0, -'_gateway'.length)}_invoices`);
    try {
      await ok('webhooks.create', { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`, events: ['invoice.overdue'] }, w.key);
      const collector = (await ok('agents.create', {
        name: 'Cobranza', model: w.aiModel.id, tools: ['invoices.get'], trigger: { kind: 'event', event: 'invoice.overdue', input: '[overdue] Una factura venció.' },
      }, w.key)).agent;
      expect(collector.trigger).toEqual({ kind: 'event', event: 'invoice.overdue', input: '[overdue] Una factura venció.' });
      model.script('overdue', [{ content: 'Anotada.' }]);
      await ok('einvoicing.configure', {
        issuer: { nit: '900373115-3', name: 'Vencidas SAS' }, technical_key: 'fc8eac422eba16e22ffd8c6f94b3f40a6e38162c', software_pin: '75315',
        numbering: { invoice: { prefix: 'SETP', from: 990000001, to: 995000000, resolution: '18760000001' }, credit_note: { prefix: 'NC', from: 1, to: 5000 } },
      }, w.key);
      const customer = (await ok('parties.create', { name: 'Tienda Andina SAS', kind: 'customer' }, w.key)).party.id;
      const post = async (issued: number, due: number) => {
        const draft = (await ok('invoices.create', {
          customer_id: customer, currency: 'COP', issue_date: dayOffset(issued), due_date: dayOffset(due),
          lines: [{ description: 'Consultoría', quantity: 1, unit_price: 1000000, tax_rate_ppm: 190000 }],
        }, w.key)).invoice;
        return (await ok('invoices.post', { id: draft.id }, w.key)).invoice;
      };
      // Two overdue as soon as they are posted (1,000,000 + 19 % = 1,190,000 open each), one due next month.
      // (A paid invoice is never noted: subgraphs/invoices/test/invoices-overdue.test.ts.)
      const [a, b] = [await post(-40, -10), await post(-35, -5)];
      await post(-1, 29);
      // The finance service's own sweep runs every half second; a second sweep runs here at the same time, twice.
      const events = systemEventsFor(new Ledger(sys.governanceFor().db, undefined, { signer: new LedgerSigner(sys.ledgerKeys) }), 'invoices', 'invoices');
      const second = () => noteOverdueInvoices({ db: financeDb, now: new Date(), log: createLogger('test', 'silent'), events });
      await Promise.all([second(), second()]);
      const runsOf = async () => (await ok('agent_runs.list', { agent_id: collector.id }, w.key)).rows;
      // Both runs started and both messages delivered: waited for, however long a loaded machine takes.
      let runs = await until(runsOf, (r) => r.length >= 2 && received.length >= 2, EVENT_WAIT_MS);
      // Time for a duplicate to show up, were there one (the trigger looks every 0.4 s, the deliverer every 1 s).
      await second();
      await new Promise((r) => setTimeout(r, 1500));
      runs = await runsOf();
      expect(runs).toHaveLength(2);
      expect(runs.every((r: any) => r.trigger.kind === 'event' && r.requested_by.type === 'agent')).toBe(true);
      const subjects = runs.map((r: any) => /"invoice_id":"(inv_[^"]+)"/.exec(r.input)?.[1]).sort();
      expect(subjects).toEqual([a.id, b.id].sort());
      for (const r of runs) await runUntil(r.id, w.key, ['succeeded']);
      // The ledger: two entries of the system (the finance service), visible to the workspace.
      const entries = (await ok('ledger.list', { tool: 'invoice.overdue', limit: 50 }, w.key)).rows;
      expect(entries).toHaveLength(2);
      expect(entries.every((e: any) => e.actor.type === 'service' && e.module === 'invoices' && e.event.data.balance === 1190000)).toBe(true);
      expect(runs.map((r: any) => r.trigger.ref).sort()).toEqual(entries.map((e: any) => e.id).sort());
      expect((await ok('ledger.verify', {}, w.key)).ok).toBe(true);
      // The endpoint: one message per event, signed, typed invoice.overdue.
      expect(received).toHaveLength(2);
      expect(received.map((m) => m.body.type)).toEqual(['invoice.overdue', 'invoice.overdue']);
      expect(received.map((m) => m.body.data.subject).sort()).toEqual([a.id, b.id].sort());
      expect(new Set(received.map((m) => m.headers['webhook-id'])).size).toBe(2);
      expect(received.every((m) => /^v1,/.test(String(m.headers['webhook-signature'])))).toBe(true);
    } finally {
      receiver.closeAllConnections();
      await new Promise<void>((resolve) => receiver.close(() => resolve()));
      await financeDb.close();
    }
  }, 240_000); // a bound, not a timing: its waits are on the events (runs, deliveries); 60 s cut it short at load 9–14
});

describe.concurrent('usage metrics from rollups kept on write', () => {
  it('llm_usage and agent_runs equal the sums of the runs\' recorded usage', async () => {
    const w = await workspace('Metrics SAS');
    const a1 = (await ok('agents.create', { name: 'Uno', model: w.aiModel.id, tools: ['invoices.list'] }, w.key)).agent;
    const a2 = (await ok('agents.create', { name: 'Dos', model: w.aiModel.id, tools: ['invoices.list'], budget: { daily_tokens: 100 } }, w.key)).agent;
    model.script('m1', [{ tool_calls: [{ name: 'invoices__list', arguments: {} }], usage: { prompt_tokens: 321, completion_tokens: 45, cached_tokens: 100 } }, { content: 'uno', usage: { prompt_tokens: 400, completion_tokens: 7 } }]);
    model.script('m2', [{ content: 'dos', usage: { prompt_tokens: 50, completion_tokens: 3 } }]);
    model.script('m3', [{ content: 'tres', usage: { prompt_tokens: 10, completion_tokens: 1 } }]);
    const runs = [
      (await ok('agents.run', { agent_id: a1.id, input: '[m1] uno' }, w.key)).run,
      (await ok('agents.run', { agent_id: a1.id, input: '[m2] dos' }, w.key)).run,
      (await ok('agents.run', { agent_id: a2.id, input: '[m3] tres' }, w.key)).run,
    ];
    const done = await Promise.all(runs.map((r) => runUntil(r.id, w.key, ['succeeded', 'failed'])));
    expect(done.map((r) => r.status)).toEqual(['succeeded', 'succeeded', 'failed']);
    // Each run's cost, by hand: (input − cached) × 300 + cached × 300 + output × 1,200 (cached defaults to the input price).
    // m1: (321 × 300 + 45 × 1,200) + (400 × 300 + 7 × 1,200) = (96,300 + 54,000) + (120,000 + 8,400) = 278,700.
    // m2: 50 × 300 + 3 × 1,200 = 15,000 + 3,600 = 18,600. m3: stopped by its budget before any call: 0.
    expect(done.map((r) => r.usage.cost_micros)).toEqual([278_700, 18_600, 0]);
    const usage = await ok('metrics.query', { metric: 'llm_usage', days: 7 }, w.key);
    const sum = (f: string) => done.reduce((s, r) => s + r.usage[f], 0);
    expect(usage.summary.value).toBe(sum('input_tokens') + sum('output_tokens'));
    expect(usage.series.reduce((s: number, p: any) => s + p.value, 0)).toBe(usage.summary.value);
    expect(usage.rows).toEqual([
      { model_id: w.aiModel.id, model_name: 'Scripted', agent_id: a1.id, agent_name: 'Uno', input_tokens: 771, output_tokens: 55, cached_tokens: 100, calls: 3, cost_micros: 297_300, currency: 'USD' },
    ]);
    const byStatus = await ok('metrics.query', { metric: 'agent_runs', days: 7, compare: 'previous_period' }, w.key);
    expect(byStatus.summary).toMatchObject({ value: 3, previous: 0 });
    const row = (status: string) => byStatus.rows.find((r: any) => r.status === status);
    expect(row('all')).toMatchObject({ runs: 3, cost_micros: 297_300 });
    expect(row('all').p95_ms).toBeGreaterThanOrEqual(row('all').p50_ms);
    expect([row('succeeded').runs, row('failed').runs, row('cancelled').runs]).toEqual([2, 1, 0]);
    expect(row('succeeded').cost_micros).toBe(297_300);
    // The workspace's activity counts the runs' calls, and says which were agents'.
    const activity = await ok('metrics.query', { metric: 'activity', days: 1, limit: 100 }, w.key);
    expect(activity.rows.find((r: any) => r.tool === 'invoices.list')).toEqual({ tool: 'invoices.list', count: 1, by_agent_runs: 1 });
    expect(activity.rows.find((r: any) => r.tool === 'agents.run')).toMatchObject({ count: 3, by_agent_runs: 0 });
    // The runs are also a records source.
    const listed = await ok('records.list', { source: 'agent_runs', limit: 10 }, w.key);
    expect(listed.rows.map((r: any) => r.id).sort()).toEqual(runs.map((r) => r.id).sort());
    const refused = await sys.invoke('metrics.query', { metric: 'llm_usage', days: 400 }, w.key);
    expect([refused.status, refused.body.code]).toEqual([422, 'invalid_input']);
  }, 60_000);
});

describe.concurrent('reads of the agents subgraph', () => {
  it('records sources agents, agent_runs, ai_models, mcp_servers and connections (never a secret), and the graph\'s runs with their agent, each of one workspace only', async () => {
    const w = await workspace('Reads SAS');
    const other = await workspace('Other Reads SAS');
    const connection = (await ok('connections.create', { name: 'Archivos', service: 'files MCP', kind: 'api_key', api_key: MCP_TOKEN }, w.key)).connection;
    const server = (await ok('mcp_servers.connect', { name: 'Archivos', key: 'files', url: mcp.url, connection_id: connection.id }, w.key)).mcp_server;
    const agent = (await ok('agents.create', { name: 'Lectora', model: w.aiModel.id, tools: ['invoices.list'] }, w.key)).agent;
    model.script('reads', [{ content: 'Nada que hacer.', usage: { prompt_tokens: 40, completion_tokens: 4 } }]);
    const started = (await ok('agents.run', { agent_id: agent.id, input: '[reads] Mira.' }, w.key)).run;
    await runUntil(started.id, w.key, ['succeeded']);

    const rows = async (source: string, key = w.key) => (await ok('records.list', { source, limit: 50 }, key)).rows;
    expect((await rows('agents')).map((r: any) => r.id)).toEqual([agent.id]);
    expect((await rows('agent_runs')).map((r: any) => [r.id, r.status])).toEqual([[started.id, 'succeeded']]);
    expect((await rows('ai_models')).map((r: any) => [r.id, r.name, r.input_price, r.output_price])).toEqual([[w.aiModel.id, 'Scripted', 300, 1200]]);
    expect((await rows('mcp_servers')).map((r: any) => [r.id, r.key, r.tools])).toEqual([[server.id, 'files', 2]]);
    expect((await rows('connections')).map((r: any) => [r.id, r.kind])).toEqual([[connection.id, 'api_key']]);
    const everything = JSON.stringify(await Promise.all(['agents', 'agent_runs', 'ai_models', 'mcp_servers', 'connections'].map((source) => rows(source))));
    for (const secret of [MCP_TOKEN, MODEL_KEY]) expect(everything).not.toContain(secret);
    // The other workspace sees none of them.
    for (const source of ['agent_runs', 'mcp_servers', 'connections']) expect(await rows(source, other.key)).toEqual([]);
    expect((await rows('ai_models', other.key)).map((r: any) => r.id)).toEqual([other.aiModel.id]);

    const query = 'query($agent: ID) { agentRuns(limit: 5, agentId: $agent) { id status stopReason steps inputTokens outputTokens costMicros currency agent { id name } } }';
    const graph = await sys.fetch('/graphql', { key: w.key, body: { query, variables: { agent: agent.id } } });
    expect(graph.status, JSON.stringify(graph.body)).toBe(200);
    // 40 × 300 + 4 × 1,200 = 12,000 + 4,800 = 16,800 millionths of a cent.
    expect(graph.body.data.agentRuns).toEqual([{
      id: started.id, status: 'succeeded', stopReason: 'completed', steps: 1, inputTokens: 40, outputTokens: 4, costMicros: 16_800, currency: 'USD', agent: { id: agent.id, name: 'Lectora' },
    }]);
    const one = await sys.fetch('/graphql', { key: other.key, body: { query: `{ agentRun(id: "${started.id}") { id } agentRuns { id } }` } });
    expect(one.body.data).toEqual({ agentRun: null, agentRuns: [] });
  }, 60_000);
});

describe.concurrent('refusals of the agents tools', () => {
  it('models, agents, runs and connections refuse bad input with the contract code and field', async () => {
    const w = await workspace('Refusals SAS');
    const cases: [string, unknown, number, string, string?][] = [
      ['ai_models.create', { name: 'x', base_url: 'ftp://models.example', model: 'm', prices: { input: 1, output: 1 } }, 422, 'invalid_input', '/base_url'],
      ['ai_models.create', { name: 'x', base_url: 'https://models.example/v1', model: 'm', prices: { input: -1, output: 1 } }, 422, 'invalid_input', '/prices/input'],
      ['ai_models.create', { name: 'Scripted', base_url: 'https://models.example/v1', model: 'm', prices: { input: 1, output: 1 } }, 409, 'conflict'],
      ['ai_models.create', { name: 'y', base_url: 'https://models.example/v1', model: 'm', prices: { input: 1, output: 1 }, context_size: 1000, max_output_tokens: 1000 }, 422, 'invalid_input', '/max_output_tokens'],
      ['ai_models.update', { id: 'aim_missing', name: 'x' }, 404, 'not_found'],
      ['ai_models.get', { id: 'aim_missing' }, 404, 'not_found'],
      ['agents.create', { name: 'x', model: 'aim_missing' }, 422, 'invalid_input', '/model'],
      ['agents.create', { name: 'x', model: 'embedded', tools: ['Invoices.%'] }, 422, 'invalid_input', '/tools/0'],
      ['agents.create', { name: 'x', model: 'embedded', trigger: { kind: 'schedule', cron: 'every day at noon' } }, 422, 'invalid_input', '/trigger/cron'],
      ['agents.create', { name: 'x', model: 'embedded', tool_values: { 'not a tool': {} } }, 422, 'invalid_input'],
      ['agents.create', { name: 'x', model: 'embedded', tool_fields: { 'not a tool': ['rows.id'] } }, 422, 'invalid_input', '/tool_fields/not a tool'],
      ['agents.create', { name: 'x', model: 'embedded', tool_fields: { 'invoices.list': ['rows..id'] } }, 422, 'invalid_input'],
      ['agents.update', { id: 'agt_missing', tool_fields: { 'invoices.list': [] } }, 422, 'invalid_input'],
      ['agents.update', { id: 'agt_missing', name: 'x' }, 404, 'not_found'],
      ['agents.archive', { id: 'agt_missing' }, 404, 'not_found'],
      ['agents.run', { agent_id: 'agt_missing', input: 'x' }, 404, 'not_found'],
      ['agents.run', { agent_id: 'agt_missing', input: '   ' }, 422, 'invalid_input', '/input'],
      ['agent_runs.get', { id: 'run_missing' }, 404, 'not_found'],
      ['connections.create', { name: 'c', service: 's', kind: 'api_key' }, 422, 'invalid_input', '/api_key'],
      ['connections.create', { name: 'c', service: 's', kind: 'oauth2', access_token: 't', refresh_token: 'r' }, 422, 'invalid_input', '/token_url'],
      ['connections.revoke', { id: 'con_missing' }, 404, 'not_found'],
      ['mcp_servers.connect', { name: 'm', key: 'Bad-Key', url: 'https://mcp.example' }, 422, 'invalid_input', '/key'],
      ['mcp_servers.remove', { id: 'mcp_missing' }, 404, 'not_found'],
    ];
    for (const [tool, input, status, code, field] of cases) {
      const r = await sys.invoke(tool, input, w.key);
      expect([tool, r.status, r.body.code, ...(field ? [r.body.field] : [])]).toEqual([tool, status, code, ...(field ? [field] : [])]);
    }
    // A paused agent takes no runs; an archived one is not changed.
    const paused = (await ok('agents.create', { name: 'Pausado', model: 'embedded', status: 'paused' }, w.key)).agent;
    const r1 = await sys.invoke('agents.run', { agent_id: paused.id, input: 'x' }, w.key);
    expect([r1.status, r1.body.code]).toEqual([409, 'conflict']);
    await ok('agents.archive', { id: paused.id }, w.key);
    const r2 = await sys.invoke('agents.update', { id: paused.id, name: 'otra' }, w.key);
    expect([r2.status, r2.body.code]).toEqual([409, 'conflict']);
    // Nobody gives an agent more than they reach: a key narrowed to agents.% and invoices.% cannot give payroll.%.
    const narrow = await sys.key(w.workspace_id, 'admin', ['agents.%', 'invoices.%']);
    const r3 = await sys.invoke('agents.create', { name: 'Nómina', model: 'embedded', tools: ['payroll.%'] }, narrow.api_key);
    expect([r3.status, r3.body.code]).toEqual([403, 'policy_denied']);
    const r4 = await sys.invoke('agents.create', { name: 'Facturas', model: 'embedded', tools: ['invoices.list'] }, narrow.api_key);
    expect(r4.status).toBe(200);
    // The model's key is write-only: sealed, never shown (a hint of its last 4 characters only).
    const shown = (await ok('ai_models.get', { id: w.aiModel.id }, w.key)).ai_model;
    expect(shown).toMatchObject({ api_key_set: true, api_key_hint: `…${MODEL_KEY.slice(-4)}` });
    expect(JSON.stringify(shown)).not.toContain(MODEL_KEY);
    const catalog = await sys.fetch('/v1/tools?module=ai_models', { key: w.key });
    const create = catalog.body.tools.find((t: any) => t.name === 'ai_models.create');
    expect(create.input_schema.properties.api_key.writeOnly).toBe(true);
    // ai_models.test answers the provider's outcome (the scripted model answers its one-message conversation).
    model.script('', [{ content: 'OK' }]);
    const tested = await ok('ai_models.test', { id: w.aiModel.id }, w.key);
    expect(tested).toMatchObject({ ok: true, model: 'scripted-1', usage: { input_tokens: 100, output_tokens: 20 } });
  }, 60_000);
});

describe('runs survive a restart of the agents subgraph', () => {
  // One kill serves both runs: one whose model is answering step 2, one whose call is on its way.
  it('killed while the model answers step 2: the run resumes and the task of step 1 is not made again; killed while a call is on its way: the done call is not repeated, and the one whose outcome nobody saw ends the run honestly', async () => {
    const [w, wi] = await Promise.all([workspace('Kill SAS'), workspace('Inflight SAS')]);
    const agent = (await ok('agents.create', { name: 'Persistente', model: w.aiModel.id, tools: ['tasks.create'], tool_values: { 'tasks.create': { project_id: w.project.id } } }, w.key)).agent;
    model.script('kill', [
      { tool_calls: [{ name: 'tasks__create', arguments: { title: 'Una sola vez' } }] },
      { content: 'Hecho.', hold: true },
    ]);
    const connection = (await ok('connections.create', { name: 'Archivos', service: 'files MCP', kind: 'api_key', api_key: MCP_TOKEN }, wi.key)).connection;
    const server = (await ok('mcp_servers.connect', { name: 'Archivos', key: 'files', url: mcp.url, connection_id: connection.id }, wi.key)).mcp_server;
    const inflightAgent = (await ok('agents.create', {
      name: 'En vuelo', model: wi.aiModel.id, tools: ['tasks.create', 'mcp.files.slow_note'], tool_values: { 'tasks.create': { project_id: wi.project.id } },
    }, wi.key)).agent;
    model.script('inflight', [
      { tool_calls: [{ name: 'tasks__create', arguments: { title: 'Antes del corte' } }, { name: 'mcp__files__slow_note', arguments: { text: 'durante el corte' } }] },
      { content: 'no debería llegar' },
    ]);
    const slowCalls = () => mcp.calls.filter((c) => c.tool === 'slow_note').length;
    const before = slowCalls();
    const arrived = mcp.slowArrived();
    const started = (await ok('agents.run', { agent_id: agent.id, input: '[kill] Crea la tarea.' }, w.key)).run;
    const inflight = (await ok('agents.run', { agent_id: inflightAgent.id, input: '[inflight] Anota.' }, wi.key)).run;
    await Promise.all([model.arrived('kill', 1), arrived]);
    await sys.killSubgraph('agents');
    model.release('kill', 1);
    mcp.releaseSlow();
    await sys.restartSubgraph('agents');

    const done = await runUntil(started.id, w.key, ['succeeded', 'failed'], 90_000);
    expect(done).toMatchObject({ status: 'succeeded', output: 'Hecho.' });
    expect(done.attempts).toBeGreaterThanOrEqual(2);
    expect((await ok('tasks.list', { project_id: w.project.id }, w.key)).rows.map((t: any) => t.title)).toEqual(['Una sola vez']);
    const entries = await runLedger(started.id, w.key);
    expect(entries.filter((e) => e.tool === 'tasks.create').map((e) => e.outcome)).toEqual(['ok']);
    // Step 2 was asked twice (the first answer died with the process); it was recorded once.
    expect(model.requests.filter((r) => r.tag === 'kill' && r.step === 1).length).toBe(2);
    expect(done.steps).toHaveLength(2);
    expect(done.usage.input_tokens).toBe(200);

    const ended = await runUntil(inflight.id, wi.key, ['succeeded', 'failed'], 90_000);
    expect(ended).toMatchObject({ status: 'failed', stop_reason: 'outcome_unknown' });
    expect(ended.steps[0].calls.map((c: any) => [c.tool, c.status])).toEqual([['tasks.create', 'done'], ['mcp_servers.call', 'unknown']]);
    expect(slowCalls() - before).toBe(1);
    expect((await ok('tasks.list', { project_id: wi.project.id }, wi.key)).rows.map((t: any) => t.title)).toEqual(['Antes del corte']);
    const inflightEntries = await runLedger(inflight.id, wi.key);
    expect(inflightEntries.filter((e) => e.tool === 'tasks.create').map((e) => e.outcome)).toEqual(['ok']);
    const mcpOutcomes = inflightEntries.filter((e) => e.tool === 'mcp_servers.call').map((e) => e.outcome);
    expect(mcpOutcomes).not.toContain('ok');
    expect(mcpOutcomes).toContain('interrupted');
    expect(model.requests.filter((r) => r.tag === 'inflight' && r.step === 1)).toHaveLength(0);
    expect(server.id).toMatch(/^mcp_/);
  }, 150_000);
});
