// Bytes a `ledger.list` page allocates in the process that serves it (issue 33, memory): V8's
// sampling heap profiler, counting collected objects too, around BENCH_CALLS (default 300) calls of
// each page the soak reads — the newest 50 entries, and 50 of one tool (`parties.create`) —, against
// a workspace chain of BENCH_ENTRIES (default 3,000) entries seeded like the soak's (200
// `parties.create`, then reads), on the memory store. Prints KB allocated per call (all of it, and
// the BSON decoding's share), and the bytes of the store's answers per call (from the driver's
// command monitoring, measured in a separate pass: monitoring copies every answer it reports).
// `node bench/ledger-list-alloc.ts`.
import { Session } from 'node:inspector/promises';
import { calculateObjectSize } from 'bson';
import { buildMongoServerJar, ensureJavaAndMaven, startMongo, stopAll } from '../scripts/infra.ts';
import { connectDatabase } from '../shared/src/db.ts';
import { Ledger } from '../shared/src/governance/ledger.ts';
import type { Principal } from '../shared/src/principal.ts';
import { where } from './probe.ts';

const calls = Number(process.env.BENCH_CALLS ?? 300);
const entries = Number(process.env.BENCH_ENTRIES ?? 3_000);
await ensureJavaAndMaven();
await buildMongoServerJar();
const mongo = await startMongo({ backend: 'memory' });
interface HeapNode { callFrame: { url: string }; selfSize: number; children: HeapNode[] }
try {
  const ws = 'ws_alloc';
  const principal: Principal = { workspace: ws, role: 'owner', actor: { type: 'api_key', id: 'key_bench' }, credential_id: 'key_bench', scopes: null, patterns: null };
  const seed = await connectDatabase(mongo.url, 'bench_alloc');
  const writer = new Ledger(seed, undefined, { signer: null });
  await writer.init();
  for (let i = 0; i < entries; i += 100) {
    await Promise.all(Array.from({ length: Math.min(100, entries - i) }, (_, j) => writer.append({
      principal, tool: i + j < 200 ? 'parties.create' : ['parties.list', 'ledger.list'][(i + j) % 2], risk: i + j < 200 ? 'write' : 'read',
      input_digest: 'a'.repeat(64), outcome: 'ok', duration_ms: 3, ...((i + j) % 4 === 1 ? { idempotency_key: `soak-${i + j}` } : {}),
    })));
  }
  await writer.countActivity(ws);
  const pages = { newest: { limit: 50 }, 'by tool': { tool: 'parties.create', limit: 50 } };

  // Pass 1, unmonitored (as production runs): bytes allocated per call.
  const session = new Session();
  session.connect();
  const reader = new Ledger(seed, undefined, { signer: null });
  for (const [name, filter] of Object.entries(pages)) {
    for (let i = 0; i < 20; i++) await reader.list(ws, filter); // warm
    await session.post('HeapProfiler.startSampling', { samplingInterval: 1024, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true } as never);
    let rows = 0;
    for (let i = 0; i < calls; i++) rows += (await reader.list(ws, filter)).rows.length;
    const { profile } = (await session.post('HeapProfiler.stopSampling')) as unknown as { profile: { head: HeapNode } };
    let total = 0;
    let bson = 0;
    const walk = (n: HeapNode) => {
      total += n.selfSize;
      if (/^(bson|mongodb)$/.test(where(n.callFrame.url))) bson += n.selfSize;
      n.children.forEach(walk);
    };
    walk(profile.head);
    console.log(`ledger.list ${name.padEnd(8)} ${(rows / calls).toFixed(0)} rows/call: ${(total / calls / 1024).toFixed(1)} KB allocated per call (driver and BSON ${(bson / calls / 1024).toFixed(1)} KB)`);
  }
  session.disconnect();

  // Pass 2, monitored: what the store answered, per call.
  const monitored = await connectDatabase(mongo.url, 'bench_alloc', { monitorCommands: true });
  const answers = new Map<string, number>();
  monitored.getClient().on('commandSucceeded', (e: { commandName: string; reply: Record<string, unknown> }) => {
    const cursor = e.reply.cursor as { ns?: string } | undefined;
    const key = `${e.commandName} ${cursor?.ns?.split('.').at(-1) ?? ''}`;
    answers.set(key, (answers.get(key) ?? 0) + calculateObjectSize(e.reply));
  });
  const probe = new Ledger(monitored, undefined, { signer: null });
  for (const [name, filter] of Object.entries(pages)) {
    answers.clear();
    for (let i = 0; i < calls; i++) await probe.list(ws, filter);
    console.log(`  answers per call (${name}): ${[...answers].map(([k, v]) => `${k} ${(v / calls / 1024).toFixed(1)} KB`).join(', ')}`);
  }
  await Promise.all([seed.close(), monitored.close()]);
} finally {
  await stopAll();
}
