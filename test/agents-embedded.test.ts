import { localDate } from '@cuadra/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureEmbeddedModel } from '../scripts/model.ts';
import { seedReceivables } from './helpers/canvas.ts';
import { startTestSystem, type TestSystem } from './helpers/system.ts';

// Issue 37, "Done when": with the embedded model (SmolLM2-135M-Instruct served by llama.cpp,
// no network), an agent lists the overdue invoices and creates a reminder task. The test asserts
// the effects in the workspace and the ledger, not the model's prose.
//
// The bound: the agent follows a fixed procedure (invoices.list, then tasks.create, then its
// answer) with its project and its filter fixed, so the model writes only the task's title and
// the answer, each under a JSON-schema grammar (tool calls) or as text; at most 3 model calls of at
// most 128 tokens each (about 10 s apiece on two cores), at most 180 s of working time. The
// test's own timeout is 300 s.

let sys: TestSystem;

beforeAll(async () => {
  await ensureEmbeddedModel();
  // The worker's shared system: the run makes a few dozen calls, well inside the default quotas.
  sys = await startTestSystem('agentsllm');
}, 240_000);

afterAll(async () => {
  await sys?.stop();
});

async function ok(tool: string, input: unknown, key: string): Promise<any> {
  const r = await sys.invoke(tool, input, key);
  expect(r.status, `${tool}: ${JSON.stringify(r.body)}`).toBe(200);
  return r.body.output;
}

describe('an agent on the embedded model', () => {
  it('lists the overdue invoices and creates a reminder task, every call as the agent with its run id on the ledger', async () => {
    const { workspace_id, api_key: key } = await sys.workspace('Cobranza Embebida SAS');
    // E-invoicing set up, three customers, six posted invoices: one overdue (issued 50 days ago, due 20 days ago, paid in part), the rest not yet due.
    const seeded = await seedReceivables(sys, key);
    const overdue = (await ok('invoices.get', { id: seeded.invoices[0] }, key)).invoice;
    const current = (await ok('invoices.get', { id: seeded.invoices[1] }, key)).invoice;
    expect(overdue.due_date < localDate(new Date()) && overdue.balance > 0).toBe(true);
    const project = (await ok('projects.create', { name: 'Cobranza', key: 'COB' }, key)).project;

    // The embedded model answers as an OpenAI-compatible provider.
    const tested = await ok('ai_models.test', { id: 'embedded' }, key);
    expect(tested).toMatchObject({ ok: true, error: null });

    const agent = (await ok('agents.create', {
      name: 'Cobranza', model: 'embedded',
      instructions: 'Eres el agente de cobranza. Primero lista las facturas vencidas; luego crea una tarea de recordatorio cuyo título nombre al cliente y el número de la factura vencida.',
      tools: ['invoices.list', 'tasks.create'],
      tool_values: { 'invoices.list': { overdue: true, limit: 5 }, 'tasks.create': { project_id: project.id, priority: 'high' } },
      // What the model reads of the listing: the fields a reminder needs (about 60 tokens, not the ~750 of a whole invoice).
      tool_fields: { 'invoices.list': ['rows.id', 'rows.number', 'rows.customer.name', 'rows.due_date', 'rows.balance', 'rows.currency'] },
      procedure: ['invoices.list', 'tasks.create'],
      limits: { max_steps: 3, max_seconds: 180 },
    }, key)).agent;
    const started = (await ok('agents.run', { agent_id: agent.id, input: 'Revisa las facturas vencidas y crea una tarea de recordatorio.' }, key)).run;

    const deadline = Date.now() + 240_000;
    let run: any;
    do {
      await new Promise((r) => setTimeout(r, 200));
      run = (await ok('agent_runs.get', { id: started.id }, key)).run;
    } while (!['succeeded', 'failed', 'timed_out', 'cancelled'].includes(run.status) && Date.now() < deadline);
    expect(run, JSON.stringify(run)).toMatchObject({ status: 'succeeded', stop_reason: 'completed' });
    expect(run.steps, JSON.stringify(run.steps)).toHaveLength(3);

    // Effects in the workspace: the listing saw the overdue invoice only; one task, in the fixed project.
    const [list, create] = [run.steps[0].calls[0], run.steps[1].calls[0]];
    expect(list).toMatchObject({ tool: 'invoices.list', status: 'done', arguments: { overdue: true, limit: 5 } });
    // The result as the model read it (cut to the small model's share of its context, so read as text).
    expect(list.result).toContain(`"number":"${overdue.number}"`);
    expect(list.result).not.toContain(`"number":"${current.number}"`);
    // Only the fields the agent names for the tool, less nothing else: the whole result the model read.
    expect(JSON.parse(list.result)).toEqual({
      tool: 'invoices.list', status: 'done',
      data: { rows: [{ id: overdue.id, number: overdue.number, customer: { name: overdue.customer.name }, due_date: overdue.due_date, balance: overdue.balance, currency: overdue.currency }] },
    });
    expect(create).toMatchObject({ tool: 'tasks.create', status: 'done', arguments: { project_id: project.id, priority: 'high' } });
    const tasks = (await ok('tasks.list', { project_id: project.id }, key)).rows;
    expect(tasks).toHaveLength(1);
    // tasks.create stores the title trimmed (the model may end it with a space: a fresh clone's run saw "…, due, ").
    expect(tasks[0]).toMatchObject({ title: String(create.arguments.title).trim(), priority: 'high' });
    expect(typeof tasks[0].title).toBe('string');
    expect(tasks[0].title.trim().length).toBeGreaterThan(0);

    // The ledger: which calls, as which principal, with which run id.
    const entries = (await ok('ledger.list', { run: run.id }, key)).rows.reverse();
    expect(entries.map((e: any) => [e.tool, e.outcome, e.idempotency_key])).toEqual([
      ['invoices.list', 'ok', `${run.id}:s1:c0`],
      ['tasks.create', 'ok', `${run.id}:s2:c0`],
    ]);
    for (const e of entries) expect(e).toMatchObject({ actor: { type: 'agent', id: agent.id }, credential_id: `agent:${agent.id}`, run_id: run.id, workspace: workspace_id });

    // Usage: real token counts from the model, free of charge; the metric says the same.
    expect(run.usage.input_tokens).toBeGreaterThan(0);
    expect(run.usage.output_tokens).toBeGreaterThan(0);
    expect(run.usage.cost_micros).toBe(0);
    for (const step of run.steps) expect(step.usage.output_tokens).toBeLessThanOrEqual(128);
    // The last step's prompt is the second's and what came after: the model kept the run's evaluated tokens (prompt_cache_key).
    expect(run.steps[2].usage.cached_tokens).toBeGreaterThan(run.steps[1].usage.input_tokens / 2);
    const usage = await ok('metrics.query', { metric: 'llm_usage', days: 1 }, key);
    expect(usage.summary.value).toBe(run.usage.input_tokens + run.usage.output_tokens);
    expect(usage.rows).toEqual([expect.objectContaining({ model_id: 'embedded', agent_id: agent.id, calls: 3, input_tokens: run.usage.input_tokens, output_tokens: run.usage.output_tokens })]);
  }, 300_000);
});
