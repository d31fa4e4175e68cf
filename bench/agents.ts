// The agent runtime's own cost (issue 37): per model step and per tool call, with the model's
// time taken out, as ratios against a baseline measured side by side in the same sitting.
//
//   node bench/agents.ts            (BENCH_RUNS=30 by default; never part of npm test)
//
// Each round runs the same work two ways, alternately:
//  (r) as an agent run: 3 model steps (the scripted OpenAI-compatible model of the tests answers at
//      once), 2 of them asking for `invoices.list`, each call through the gateway's pipeline as the
//      agent with its run+step Idempotency-Key; the runtime records each step, rolls up its usage
//      and stores each call's result.
//  (d) directly, as a client script would: the same 3 model requests with the `openai` client and
//      the same 2 tool calls over REST with an owner key and an Idempotency-Key each.
// It prints, per run: (r)'s wall time from agents.run to the run's end, the model's share (each
// step's recorded model-call time), the tools' share (each call's recorded time), and what is left —
// the runtime's own work: claiming, storing steps, rollups, leases, the sweep's pick-up delay —
// per step; and the ratios (r)/(d) for a whole run, and for one tool call (as the runtime times it,
// against the same call made directly).
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import OpenAI from 'openai';
import { build } from '../scripts/build.ts';
import { buildMongoServerJar, ensureJavaAndMaven, ensureRedisServer, repoRoot, startMongo, startRedis, stopAll } from '../scripts/infra.ts';
import { startScriptedModel } from '../test/helpers/scripted-model.ts';
import { startTestSystem } from '../test/helpers/system.ts';

const runs = Number(process.env.BENCH_RUNS ?? 30);
const runDir = path.join(repoRoot, 'test-output', `bench-agents-${process.pid}`);
mkdirSync(runDir, { recursive: true });

await ensureJavaAndMaven();
await ensureRedisServer();
await build();
await buildMongoServerJar();
const [mongo, redis] = await Promise.all([startMongo({ backend: 'memory', logFile: path.join(runDir, 'mongo.log') }), startRedis({ dir: runDir })]);
process.env.MONGO_URL = mongo.url;
process.env.REDIS_URL = redis.url;
process.env.CUADRA_TEST_OUTPUT = path.join(repoRoot, 'test-output');
const model = await startScriptedModel();
const sys = await startTestSystem('benchagents', { CUADRA_OUTBOUND_PRIVATE: 'allow', RATE_LIMIT_PER_CREDENTIAL: '1000000/60', RATE_LIMIT_PER_WORKSPACE: '1000000/60' });

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const p95 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil(xs.length * 0.95) - 1)];

try {
  const ws = await sys.workspace('Bench Agents SAS');
  const key = ws.api_key;
  const aiModel = (await sys.invoke('ai_models.create', { name: 'Scripted', base_url: model.url, model: 'scripted-1', prices: { input: 300, output: 1200 }, context_size: 16_000, max_output_tokens: 64 }, key)).body.output.ai_model;
  const agent = (await sys.invoke('agents.create', { name: 'Bench', model: aiModel.id, tools: ['invoices.list'] }, key)).body.output.agent;
  const client = new OpenAI({ baseURL: model.url, apiKey: 'none', maxRetries: 0 });
  const tools = [{ type: 'function' as const, function: { name: 'invoices__list', description: 'List invoices.', parameters: { type: 'object', properties: {} } } }];

  const viaRuntime: { wall: number; model: number; tools: number; perCall: number[] }[] = [];
  const direct: { wall: number; perCall: number[] }[] = [];
  for (let i = 0; i < runs + 3; i++) {
    const tag = `b${i}`;
    model.script(tag, [
      { tool_calls: [{ name: 'invoices__list', arguments: {} }] },
      { tool_calls: [{ name: 'invoices__list', arguments: { limit: 5 } }] },
      { content: 'ok' },
    ]);
    // (r) as an agent run.
    const t0 = performance.now();
    const run = (await sys.invoke('agents.run', { agent_id: agent.id, input: `[${tag}] bench` }, key)).body.output.run;
    let done: any;
    for (;;) {
      done = (await sys.invoke('agent_runs.get', { id: run.id }, key)).body.output.run;
      if (['succeeded', 'failed', 'timed_out'].includes(done.status)) break;
      await new Promise((r) => setTimeout(r, 5));
    }
    const wall = Date.parse(done.finished_at) - Date.parse(done.created_at);
    if (done.status !== 'succeeded') throw new Error(`run ${run.id} ${done.status}: ${done.error}`);
    void t0;
    const calls = done.steps.flatMap((s: any) => s.calls);
    // (d) the same work as a plain client.
    const d0 = performance.now();
    const perCall: number[] = [];
    const messages: any[] = [{ role: 'user', content: `[${tag}] bench` }];
    for (let step = 0; step < 3; step++) {
      const res = await client.chat.completions.create({ model: 'scripted-1', messages, tools, max_tokens: 64 });
      const m = res.choices[0].message;
      messages.push(m);
      for (const call of m.tool_calls ?? []) {
        const c0 = performance.now();
        const answer = await sys.invoke('invoices.list', JSON.parse((call as any).function.arguments), key, { 'idempotency-key': `direct-${tag}-${step}` });
        perCall.push(performance.now() - c0);
        messages.push({ role: 'tool', tool_call_id: call.id, content: JSON.stringify(answer.body.output) });
      }
    }
    const dWall = performance.now() - d0;
    if (i < 3) continue; // warm-up
    viaRuntime.push({ wall, model: done.steps.reduce((s: number, x: any) => s + x.duration_ms, 0), tools: calls.reduce((s: number, c: any) => s + c.duration_ms, 0), perCall: calls.map((c: any) => c.duration_ms) });
    direct.push({ wall: dWall, perCall });
  }
  const own = viaRuntime.map((r) => (r.wall - r.model - r.tools) / 3);
  const rCalls = viaRuntime.flatMap((r) => r.perCall);
  const dCalls = direct.flatMap((d) => d.perCall);
  console.log(`runs: ${runs} (3 steps, 2 tool calls each), after 3 warm-up rounds; scripted model answers at once`);
  console.log(`(r) agent run wall      median ${median(viaRuntime.map((r) => r.wall)).toFixed(1)} ms   p95 ${p95(viaRuntime.map((r) => r.wall)).toFixed(1)} ms`);
  console.log(`    of which model calls median ${median(viaRuntime.map((r) => r.model)).toFixed(1)} ms, tool calls median ${median(viaRuntime.map((r) => r.tools)).toFixed(1)} ms`);
  console.log(`    runtime's own work per step: median ${median(own).toFixed(1)} ms   p95 ${p95(own).toFixed(1)} ms`);
  console.log(`(d) direct client wall  median ${median(direct.map((d) => d.wall)).toFixed(1)} ms   p95 ${p95(direct.map((d) => d.wall)).toFixed(1)} ms`);
  console.log(`tool call: (r) median ${median(rCalls).toFixed(1)} ms   (d) median ${median(dCalls).toFixed(1)} ms   ratio r/d ${(median(rCalls) / median(dCalls)).toFixed(2)}`);
  console.log(`whole run: ratio r/d ${(median(viaRuntime.map((r) => r.wall)) / median(direct.map((d) => d.wall))).toFixed(2)}`);
} finally {
  await sys.stop();
  await model.close();
  await stopAll();
}
