// `node bench/scale.ts` (issue 33): does a read cost what it returns, or what the workspace holds?
// Starts the whole system on an H2-backed MongoDB-protocol server (as `npm start` runs), opens a
// small and a large workspace in the same instance, seeds them, and times the same reads over REST in
// both, side by side (p50 / p95 and the ratio large/small), then: writes in each, another workspace's
// p50 while 16 connections read the large one, and the resident memory of every service and of the
// database server when the reads start and after them.
//
// Sizes: BENCH_SMALL (default 1000) and BENCH_LARGE (default 20000) parties, each with the ledger
// entries of its history (BENCH_LEDGER_PER_PARTY, default 3 entries a party). BENCH_RUNS (default 15)
// timed calls per read after 2 warm-ups.
//
// How the seed keeps the tools' shapes: parties are written by crm's own `insertParty` — the function
// `parties.create` and `parties.create_from_document` call — with the handler's context (database,
// workspace, clock), so every field, position (`pos`, `pos_key`, the list counter) and derived key is
// the one the tool writes; only the HTTP hop, the pipeline and the ledger entry are skipped. The ledger
// entries are appended by the services' own `Ledger` (the same class, the same signing key, group
// commit and checkpoints), so the chain, its checkpoints and receipts verify as any other. A sample of
// 5 parties per workspace is also created through the tool over HTTP and compared field by field with
// a seeded one (the check fails the bench when a field differs in presence or type; `_runs`, the
// pipeline's stamp of the call that wrote a record, is the one field a seeded party has not).
// Invoices with their payments and bills with theirs (BENCH_INVOICES, default as many as parties;
// BENCH_BILLS, default a fifth of them, at least 1,000; either as `<small>,<large>`, e.g.
// BENCH_INVOICES=1000,100000) are seeded by bench/scale-books.ts in the
// shapes of a sample made through the tools over HTTP in the same workspace, compared field by field
// (see that file for how, and what is skipped); their calls' ledger entries (three per invoice, three
// per bill) are appended like the parties' (BENCH_BOOKS_LEDGER=0: not, for a shorter seed).
// BENCH_LOCK (a lock file, e.g. /tmp/cuadra-cpu.lock): the seeding runs without it, the timed phase
// holds it (flock), so a long seed under `nice` leaves the machine's cores to others.
// BENCH_ROW_MEMORY=1: after each row every service's resident size and heap peak (a full collection per row:
// it lowers the peaks, so memory figures of such a run are not those of a plain run; see rowMemory).
// BENCH_REST_MS (default 12000): the memory read once more after that long a rest once the reads end (0: not).
// BENCH_KEEP=<dir>: once seeded and checked, the system and the store are stopped, the store's file is copied to
// <dir> with seed.json (the sizes, the database prefix, the keys the data was written with, the workspaces' ids
// and API keys, what the checks found), and the timed phase runs on the system started again on the same file.
// BENCH_REUSE=<dir>: no seed — the store starts on a copy of <dir>'s file, the system on its prefix and keys, and
// the timed phase runs as after a BENCH_KEEP seed (the sizes are the kept ones; the shapes were checked when it was
// kept, and the output says so). Keep such folders under /tmp or test-output (a 100,000 seed is ~3–5 GB).
// BENCH_PAUSE_S (default 0): seconds to wait between the seed (or the start) and the timed phase.
// BENCH_INTERLEAVE=1: each row's calls alternated small, large, small, large… instead of all of one side, then the other;
// BENCH_INTERLEAVE=both: each row both ways, one after the other (two rows, the second "(alternated)").
// BENCH_TABLES=2: the reads table a second time in the same run, BENCH_PAUSE_BETWEEN_S (default 300) after the
// first, the lock let go meanwhile — the same reads on the same store soon after the seed and once it has settled.
// BENCH_WHERE=1: under each row, where each side's timed calls spent CPU (ms a call: each service, the store, the
// rest of the machine) and the store's busiest threads by name — what the large workspace's extra time is.
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { build } from '../scripts/build.ts';
import { buildMongoServerJar, ensureJavaAndMaven, ensureRedisServer, repoRoot, startMongo, startRedis, stopAll } from '../scripts/infra.ts';
import { startTestSystem } from '../test/helpers/system.ts';
import { connectDatabase } from '../shared/src/db.ts';
import { Ledger } from '../shared/src/governance/ledger.ts';
import { LedgerSigner } from '../shared/src/governance/anchor.ts';
import { partyDocument } from '../subgraphs/crm/src/modules/parties/tools/create.ts';
import { parties as partiesModel, partySearchTexts } from '../subgraphs/crm/src/modules/parties/model.ts';
import { readFields } from '../subgraphs/crm/src/modules/crm_fields/model.ts';
import { addGramsOfMany, assignPositions, markIndexed, positionKey, trigramsOf } from '../shared/src/index.ts';
import { pct, rng } from './invoices-h2.ts';
import { describeFairShare } from './fair-share.ts';
import { FAIR_SHARE_DEFAULTS, fairShareFromEnv } from '../shared/src/fair-share.ts';
import { MachineMeter, Probe, processCpuUs } from './probe.ts';
import { nativeBreakdown } from './native-memory.ts';
import { loadavg } from 'node:os';
import { Redis } from 'ioredis';
import { signAssertion, ASSERTION_HEADER } from '../shared/src/credentials.ts';
import { TOOL_INVOKE_PATH } from '../shared/src/subgraph.ts';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { checkSampleArithmetic, compareBookShapes, sampleThroughTools, seedBooks } from './scale-books.ts';
import { localDate } from '../shared/src/periods.ts';

/** What a kept seed is (BENCH_KEEP writes it, BENCH_REUSE reads it). */
interface KeptSeed {
  made: string;
  env: Record<string, string>;
  reuse: { dbPrefix: string; keys: { privateKey: string; publicKey: string }; ledgerKeys: { privateKey: string; publicKey: string }; sealKey: string };
  workspaces: Record<'small' | 'large' | 'other', { workspace_id: string; api_key: string; key_id: string }>;
  firstCustomer: { small: string; large: string };
  checks: string[];
}
/** The settings that make a seed (a reused one keeps its own; a different value given with BENCH_REUSE is refused). */
const SEED_ENV = ['BENCH_SMALL', 'BENCH_LARGE', 'BENCH_LEDGER_PER_PARTY', 'BENCH_INVOICES', 'BENCH_BILLS', 'BENCH_BOOKS_LEDGER'];
const KEEP = process.env.BENCH_KEEP;
const REUSE = process.env.BENCH_REUSE;
if (KEEP && REUSE) throw new Error('BENCH_KEEP and BENCH_REUSE: one or the other');
const kept: KeptSeed | undefined = REUSE ? JSON.parse(readFileSync(path.join(REUSE, 'seed.json'), 'utf8')) : undefined;
if (kept) {
  for (const k of SEED_ENV) {
    if (process.env[k] !== undefined && process.env[k] !== kept.env[k]) throw new Error(`BENCH_REUSE: ${k}=${process.env[k]} but the kept seed was made with ${kept.env[k] ?? '(unset)'}`);
    if (kept.env[k] === undefined) delete process.env[k];
    else process.env[k] = kept.env[k];
  }
}
const PAUSE_S = Number(process.env.BENCH_PAUSE_S ?? 0);
const SMALL = Number(process.env.BENCH_SMALL ?? 1000);
const LARGE = Number(process.env.BENCH_LARGE ?? 20000);
const PER_PARTY = Number(process.env.BENCH_LEDGER_PER_PARTY ?? 3);
const RUNS = Number(process.env.BENCH_RUNS ?? 15);
/** `BENCH_INVOICES`/`BENCH_BILLS`: `<small>,<large>` (default as many invoices as parties, bills a fifth of them, at least 1,000). */
const sized = (name: string, parties: number, otherwise: number) => {
  const given = process.env[name]?.split(',').map(Number);
  return given ? given[parties === SMALL ? 0 : given.length - 1] : otherwise;
};
const invoicesOf = (parties: number) => sized('BENCH_INVOICES', parties, parties);
const billsOf = (parties: number) => sized('BENCH_BILLS', parties, Math.max(1_000, Math.round(parties / 5)));
/** `BENCH_BOOKS_LEDGER=0`: the books' calls get no ledger entries (a shorter seed; the ledger reads then see the parties' entries only). */
const BOOKS_LEDGER = process.env.BENCH_BOOKS_LEDGER !== '0';
/** The ledger entries a workspace of `parties` is seeded with (its parties' and its books' calls). */
const entriesOf = (parties: number) => parties * PER_PARTY + (BOOKS_LEDGER ? 3 * (invoicesOf(parties) + billsOf(parties)) : 0);
/** `BENCH_ONLY=fairness`: seed, then measure only another workspace under load (and memory); for comparing FAIR_SHARE_* settings. */
const ONLY_FAIRNESS = process.env.BENCH_ONLY === 'fairness';
/**
 * `BENCH_PACE_AB=1`: another workspace under load measured through two gateways in turn — the
 * system's own (pacing as configured, FAIR_SHARE_PACE) and a second one on the same subgraphs
 * without pacing (FAIR_SHARE_PACE=0) —, two phases each, alternated, so both see the same machine.
 */
const PACE_AB = process.env.BENCH_PACE_AB === '1';
const runDir = path.join(repoRoot, 'test-output', 'bench', process.env.BENCH_DIR ?? 'scale');
rmSync(runDir, { recursive: true, force: true });
mkdirSync(runDir, { recursive: true });

await ensureJavaAndMaven();
await ensureRedisServer();
await build();
await buildMongoServerJar();
const storeFile = path.join(runDir, 'scale-h2.mv');
if (kept) {
  const t0 = performance.now();
  copyFileSync(path.join(REUSE!, 'scale-h2.mv'), storeFile);
  console.log(`reusing the seed kept in ${REUSE} on ${kept.made} (${(statSync(storeFile).size / 1e9).toFixed(2)} GB, copied in ${((performance.now() - t0) / 1000).toFixed(1)} s): no seed in this run; its shapes were checked when it was kept — ${kept.checks.join('; ')}`);
}
process.env.CUADRA_TEST_OUTPUT = path.join(repoRoot, 'test-output');
// The probe (shared/src/probe.ts) in every service, with a full collection before it reads memory:
// the live heap beside the resident size tells what a service keeps from what V8 merely holds.
const probeDir = path.join(runDir, 'probe');
mkdirSync(probeDir, { recursive: true });
// The fair share as the product ships it (or as this process's FAIR_SHARE_* say): a system started
// by the test helper runs with SHARED_SYSTEM_ENV laid over the environment, whose contended share is
// the uncontended one (4) for the race tests — until fair12 every fairness figure of this bench ran
// the busy workspace 4 calls at once while another called, not 1.
const fairShareEnv = { FAIR_SHARE_CONTENDED_SLOTS: process.env.FAIR_SHARE_CONTENDED_SLOTS ?? String(FAIR_SHARE_DEFAULTS.contendedSlots) };
const systemEnv = { RATE_LIMIT_PER_CREDENTIAL: '1000000/60', RATE_LIMIT_PER_WORKSPACE: '1000000/60', CUADRA_PROBE_DIR: probeDir, CUADRA_PROBE_GC: '1', CUADRA_PROBE_MONGO: process.env.BENCH_WHERE === '1' ? '1' : '0', ...fairShareEnv };
// The store, Redis and the system, and this process's connections to the store: started once, or again on a kept seed (BENCH_KEEP).
let mongo!: Awaited<ReturnType<typeof startMongo>>;
let redis!: Awaited<ReturnType<typeof startRedis>>;
let sys!: Awaited<ReturnType<typeof startTestSystem>>;
let services: Record<string, number> = {};
let probes: Record<string, Probe> = {};
let crmDb!: Awaited<ReturnType<typeof connectDatabase>>;
let invoicesDb!: Awaited<ReturnType<typeof connectDatabase>>;
let governanceDb!: Awaited<ReturnType<typeof connectDatabase>>;
let ledger!: Ledger;
async function startAll(reuse?: KeptSeed['reuse']): Promise<void> {
  const t0 = performance.now();
  [mongo, redis] = await Promise.all([
    // A store opening a seed of gigabytes reads every collection's metadata first: minutes under load.
    startMongo({ backend: 'h2', file: storeFile, logFile: path.join(runDir, 'mongo.log'), startTimeoutMs: 900_000 }),
    startRedis({ dir: runDir }),
  ]);
  process.env.MONGO_URL = mongo.url;
  process.env.REDIS_URL = redis.url;
  sys = await startTestSystem('benchscale', systemEnv, reuse ? { reuse } : {});
  const prefix = sys.gatewayDb.replace(/_gateway$/, '');
  services = { gateway: sys.gateway.pid, ...Object.fromEntries(Object.entries(sys.subgraphs).map(([n, s]) => [n, s.pid])) };
  probes = Object.fromEntries(Object.entries(services).map(([n, pid]) => [n, new Probe(probeDir, n, pid)]));
  crmDb = await connectDatabase(mongo.url, `${prefix}_crm`);
  invoicesDb = await connectDatabase(mongo.url, `${prefix}_invoices`);
  governanceDb = await connectDatabase(mongo.url, `${prefix}_governance`);
  ledger = new Ledger(governanceDb, undefined, { signer: new LedgerSigner({ privateKey: sys.ledgerKeys.privateKey }) });
  console.log(`store (pid ${mongo.pid}) and system started in ${((performance.now() - t0) / 1000).toFixed(1)} s${reuse ? ` on the kept databases ${reuse.dbPrefix}_*` : ''}`);
}
async function stopAllOfIt(): Promise<void> {
  await Promise.all([crmDb?.close(), governanceDb?.close(), invoicesDb?.close()]).catch(() => undefined);
  await sys?.stop();
  await stopAll();
}
await startAll(kept?.reuse);
/**
 * Resident memory (MB) of each process, from /proc; with `live`, each service's V8 heap in use after a full
 * collection too, and the most heap it held in use since the last reading (sampled every 200 ms: live and
 * garbage not yet collected — what a --max-old-space-size bound must stay above, with margin).
 */
/** Where each service's resident memory is at each reading (bench/native-memory.ts). */
const where: Record<string, string>[] = [];
/** When memory was last read (ms): each reading lists the trims since the one before. */
let lastReadingAt = 0;
async function rss(live = false): Promise<Record<string, string>> {
  const pids: Record<string, number> = { ...services, mongo: mongo.pid };
  const cuts = live ? Object.fromEntries(await Promise.all(Object.entries(probes).map(async ([n, p]) => [n, await p.cut()] as const))) : {};
  const heaps = Object.fromEntries(Object.entries(cuts).map(([n, c]) => [n, c.memory]));
  if (live) {
    const m = (n: number) => Math.round(n / 1048576);
    // The idle trim's collections since the last reading (shared/src/memory-trim.ts): RSS before → after, busy or idle.
    const trimsSince = (n: string) => (cuts[n].trims ?? []).filter((t) => t.at > lastReadingAt).map((t) => `${m(t.before)}→${m(t.after)}${t.busy ? ' busy' : ''}`);
    where.push(Object.fromEntries(Object.entries(services).map(([n, pid]) => {
      const b = nativeBreakdown(pid);
      const h = heaps[n];
      const trims = trimsSince(n);
      return [n, b && h ? `heap ${m(h.heapTotal)} (young ${m(h.newSpace ?? 0)}), brk ${m(b.brk)}, arenas ${m(b.arenas)}, other anon ${m(b.otherAnon)}, file ${m(b.file)}${trims.length ? `, trims ${trims.join(' ')}` : ''}` : '—'];
    })));
    lastReadingAt = Date.now();
  }
  return Object.fromEntries(Object.entries(pids).map(([n, pid]) => {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    const resident = m ? Math.round(Number(m[1]) / 1024) : NaN;
    const h = heaps[n];
    return [n, h === undefined ? String(resident) : `${resident} (heap ${Math.round(h.heapUsed / 1048576)}, peak ${Math.round((h.heapPeak ?? 0) / 1048576)})`];
  }));
}

/** A call that did not answer 200 (or did not answer): its status (0 when no answer) and how long it took. */
class CallFailed extends Error {
  readonly status: number;
  readonly ms: number;
  constructor(status: number, ms: number, message: string) {
    super(message);
    this.status = status;
    this.ms = ms;
  }
}
async function call(tool: string, input: unknown, key: string, via?: string): Promise<any> {
  const t0 = performance.now();
  let r: { status: number; body: any };
  try {
    r = via ? await invokeVia(via, tool, input, key) : await sys.invoke(tool, input, key);
  } catch (err) {
    throw new CallFailed(0, performance.now() - t0, `${tool} → no answer (${(err as Error).message})`);
  }
  if (r.status !== 200) throw new CallFailed(r.status, performance.now() - t0, `${tool} ${JSON.stringify(input)} → ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
  return r.body.output;
}
/** A tool call through the gateway at `url` (the bench's second gateway), as `sys.invoke` makes one through the system's own. */
async function invokeVia(url: string, tool: string, input: unknown, key: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`${url}/v1/tools/${tool}:invoke`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(input) });
  const text = await res.text();
  try {
    return { status: res.status, body: JSON.parse(text) };
  } catch {
    return { status: res.status, body: text };
  }
}
/** What a failed read says in the table: its status and time (`threw` for a failure that is not a call's). */
const failure = (err: unknown) => err instanceof CallFailed ? `failed: ${err.status || 'no answer'} after ${(err.ms / 1000).toFixed(1)} s` : `failed: ${(err as Error).message.slice(0, 120)}`;
/** Runs one part of the timed phase; a failure is printed and the table goes on. */
async function part(name: string, fn: () => Promise<unknown>): Promise<void> {
  try {
    await fn();
  } catch (err) {
    console.log(`  ${name}: ${failure(err)}`);
    notes.push(`${name}: ${failure(err)}`);
  }
}
const notes: string[] = [];

const WORDS = ['andina', 'caribe', 'pacifico', 'llanos', 'sabana', 'montana', 'rio', 'valle', 'costa', 'sierra', 'bosque', 'paramo'];
const UNIQUE = 'Zurbarán Quintero Único';

/** Appends `count` entries of `workspace`'s calls to its ledger (the services' own Ledger), the tool of each from `toolOf`. */
async function appendEntries(workspace: string, count: number, toolOf: (k: number) => string): Promise<void> {
  const principal = { workspace, role: 'owner', actor: { type: 'api_key', id: 'seed' }, credential_id: 'seed', scopes: null, patterns: null };
  for (let done = 0; done < count; done += 2_000) {
    await Promise.all(Array.from({ length: Math.min(2_000, count - done) }, (_, i) => {
      const tool = toolOf(done + i);
      return ledger.append({ principal: principal as never, tool, risk: /\.(list|get)$/.test(tool) ? 'read' : 'write', input_digest: null, outcome: 'ok', duration_ms: 3 });
    }));
  }
}

/**
 * Seeds `n` parties (one in ten a vendor; the unique name a customer, in the middle) with their calls' ledger entries; answers the customers (the unique one first) and vendors.
 * In bulk, as `insertParty` writes one: each document by its own `partyDocument`, the positions as one
 * block of the series' counter, the search trigrams kept under them (`addGramsOfMany`) and the series
 * marked indexed before the documents are written, then the documents through the model, 2,000 to an insert.
 */
async function seed(workspace: string, n: number): Promise<{ customers: { id: string; name: string }[]; vendors: { id: string; name: string }[] }> {
  const rand = rng(n);
  const t0 = performance.now();
  // The unique name sits in the middle of the history: a search that matches it must not need the newest positions.
  const uniqueAt = Math.floor(n / 2) + 1;
  const customers: { id: string; name: string }[] = [];
  const vendors: { id: string; name: string }[] = [];
  const ctx = { workspace, now: new Date() };
  const fields = await readFields(crmDb, workspace);
  const model = partiesModel(crmDb);
  const series = model.collection.collectionName;
  const first = await assignPositions(crmDb, series, workspace, n);
  for (let from = 0; from < n; from += 2_000) {
    const docs = Array.from({ length: Math.min(2_000, n - from) }, (_, k) => {
      const i = from + k;
      const name = i === uniqueAt ? UNIQUE : `${WORDS[Math.floor(rand() * WORDS.length)]} ${WORDS[Math.floor(rand() * WORDS.length)]} ${i} SAS`;
      const kind = i % 10 === 0 ? 'vendor' : 'customer';
      const doc = partyDocument(ctx, { name, kind, email: `c${i}@example.co`, tags: i % 7 === 0 ? ['vip'] : [] }, fields);
      (kind === 'vendor' ? vendors : customers)[i === uniqueAt ? 'unshift' : 'push']({ id: doc._id, name });
      return { ...doc, pos: first + i, pos_key: positionKey(series, workspace, first + i) };
    });
    await addGramsOfMany(crmDb, series, workspace, docs.map((d) => ({ pos: d.pos, grams: trigramsOf(partySearchTexts(d)) })));
    if (first === 1 && from === 0) await markIndexed(crmDb, series, workspace);
    // Through the model, as `createPositioned`'s `model.create` stores it (its schema's casting; empty objects left out).
    await model.insertMany(docs as never[], { ordered: false });
  }
  const partiesMs = performance.now() - t0;
  const entries = n * PER_PARTY;
  await appendEntries(workspace, entries, (k) => k % 100 === 0 ? 'parties.update' : k % PER_PARTY === 0 ? 'parties.create' : 'parties.list');
  await ledger.countActivity(workspace, Number.MAX_SAFE_INTEGER);
  console.log(`seeded ${n.toLocaleString('en')} parties in ${(partiesMs / 1000).toFixed(1)} s and ${entries.toLocaleString('en')} ledger entries in ${((performance.now() - t0 - partiesMs) / 1000).toFixed(1)} s`);
  return { customers, vendors };
}

/** Seeds `workspace`'s books: a sample through the tools, then invoices with payments and bills with theirs in its shapes, and their calls' ledger entries. */
async function seedWorkspaceBooks(workspace: string, key: string, parties: Awaited<ReturnType<typeof seed>>, size: number): Promise<void> {
  const t0 = performance.now();
  const today = localDate(new Date());
  const sample = await sampleThroughTools((tool, input) => call(tool, input, key), today, parties.customers[1], parties.vendors[0]);
  const checked = await checkSampleArithmetic(invoicesDb, workspace, sample);
  const n = invoicesOf(size);
  const m = billsOf(size);
  const seeded = await seedBooks(invoicesDb, workspace, sample, parties.customers, parties.vendors, n, m, today);
  const books = performance.now() - t0;
  const calls = ['invoices.create', 'invoices.post', 'payments.register', 'bills.create', 'bills.post', 'bills.pay'];
  if (BOOKS_LEDGER) await appendEntries(workspace, 3 * (n + m), (k) => k < 3 * n ? calls[k % 3] : calls[3 + (k % 3)]);
  await ledger.countActivity(workspace, Number.MAX_SAFE_INTEGER);
  if (!ONLY_FAIRNESS) await compareBookShapes(invoicesDb, workspace, sample);
  console.log(`the tools' sample and the seed's arithmetic agree on the journal lines and ${checked} rollup documents`);
  console.log(`seeded ${JSON.stringify(seeded)} in ${(books / 1000).toFixed(1)} s and ${(BOOKS_LEDGER ? 3 * (n + m) : 0).toLocaleString('en')} ledger entries in ${((performance.now() - t0 - books) / 1000).toFixed(1)} s`);
}

/** Holds `file` (flock) until the answer's `release` is called: the timed phase's share of a lock the seeding does not take. */
async function holdLock(file: string | undefined): Promise<{ release(): void }> {
  if (!file) return { release() {} };
  const t0 = performance.now();
  const child = spawn('flock', [file, 'sh', '-c', 'echo locked; read _'], { stdio: ['pipe', 'pipe', 'inherit'] });
  await once(child.stdout!, 'data');
  console.log(`(waited ${((performance.now() - t0) / 1000).toFixed(0)} s for ${file}; uptime: ${loadavg().map((x) => x.toFixed(2)).join(' ')})`);
  return { release: () => child.stdin!.end() };
}

/** A party created through the tool and a seeded one: the same fields, of the same types. */
async function compareShapes(workspace: string, key: string): Promise<void> {
  const viaTool = await call('parties.create', { name: 'Forma Comparada SAS', kind: 'customer', email: 'forma@example.co', tags: ['vip'] }, key);
  const stored = await crmDb.collection('parties').findOne({ _id: viaTool.party.id });
  const seeded = await crmDb.collection('parties').findOne({ workspace, _id: { $ne: viaTool.party.id }, tags: 'vip' });
  // `_runs`: the pipeline's stamp of the call that wrote it (run-stamps), not a field of the party.
  const kinds = (d: Record<string, unknown> | null) => JSON.stringify(Object.entries(d ?? {}).filter(([k]) => k !== '_runs').map(([k, v]) => [k, v === null ? 'null' : Array.isArray(v) ? 'array' : v instanceof Date ? 'date' : typeof v]).sort());
  const [a, b] = [kinds(stored), kinds(seeded)];
  if (a !== b) throw new Error(`a seeded party's shape differs from the tool's:\n tool ${a}\n seed ${b}`);
}

interface Row { label: string; small: number[] | string; large: number[] | string }
const table: Row[] = [];
const WHERE = process.env.BENCH_WHERE === '1';
const TABLES = Number(process.env.BENCH_TABLES ?? 1);
const PAUSE_BETWEEN_S = Number(process.env.BENCH_PAUSE_BETWEEN_S ?? 300);
/** The tables before the last (BENCH_TABLES). */
const earlier: { when: string; rows: Row[] }[] = [];
/** CPU µs of each of the store's threads so far, by thread id (its name beside it). */
function storeThreads(): Map<string, { name: string; us: number }> {
  const out = new Map<string, { name: string; us: number }>();
  let tids: string[] = [];
  try {
    tids = readdirSync(`/proc/${mongo.pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tids) {
    let name = '?';
    try {
      name = readFileSync(`/proc/${mongo.pid}/task/${tid}/comm`, 'utf8').trim();
    } catch {
      continue;
    }
    out.set(tid, { name, us: processCpuUs(mongo.pid, `/proc/${mongo.pid}/task/${tid}/stat`) });
  }
  return out;
}
/**
 * BENCH_INTERLEAVE=1: a row's calls alternated, small then large, call by call (after 2 warm-ups of each), so both
 * sides see the same stretch of the machine; a side that fails is a row saying so.
 */
const INTERLEAVE = process.env.BENCH_INTERLEAVE === '1';
/** BENCH_INTERLEAVE=both: each row twice, as usual (all small calls, then all large) and alternated, one after the other. */
const BOTH_WAYS = process.env.BENCH_INTERLEAVE === 'both';
async function alternated(a: () => Promise<unknown>, b: () => Promise<unknown>): Promise<[number[] | string, number[] | string]> {
  const out: [number[] | string, number[] | string] = [[], []];
  const fns = [a, b];
  for (let k = 0; k < 2; k++) {
    try {
      for (let i = 0; i < 2; i++) await fns[k]();
    } catch (err) {
      out[k] = failure(err);
    }
  }
  for (let i = 0; i < RUNS; i++) {
    for (let k = 0; k < 2; k++) {
      const times = out[k];
      if (typeof times === 'string') continue;
      const t0 = performance.now();
      try {
        await fns[k]();
        times.push(performance.now() - t0);
      } catch (err) {
        out[k] = failure(err);
      }
    }
  }
  return out;
}
/** What was read from disk by the store so far (bytes, /proc/<pid>/io), and the machine's stalled time on I/O and on memory (µs, /proc/pressure: some task waiting). */
function ioNow(): { storeRead: number; ioStall: number; memStall: number } {
  const num = (file: string, re: RegExp) => {
    try {
      return Number(re.exec(readFileSync(file, 'utf8'))?.[1] ?? NaN);
    } catch {
      return NaN;
    }
  };
  return { storeRead: num(`/proc/${mongo.pid}/io`, /read_bytes: (\d+)/), ioStall: num('/proc/pressure/io', /^some .*total=(\d+)/m), memStall: num('/proc/pressure/memory', /^some .*total=(\d+)/m) };
}
/** BENCH_WHERE=1: the last timed side's CPU per call, as `timed` measured it. */
let lastWhere = '';
async function timed(fn: () => Promise<unknown>): Promise<number[]> {
  for (let i = 0; i < 2; i++) await fn();
  const out: number[] = [];
  const meter = WHERE ? new MachineMeter({ ...services, store: mongo.pid, bench: process.pid }) : undefined;
  const threads0 = WHERE ? storeThreads() : undefined;
  // Each service's probe window opened here (a full collection in each first, outside the timed calls): its store commands during them.
  if (WHERE) await Promise.all(Object.values(probes).map((p) => p.cut()));
  const io0 = WHERE ? ioNow() : undefined;
  meter?.begin();
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    await fn();
    out.push(performance.now() - t0);
  }
  if (meter) {
    const m = meter.end(RUNS);
    const io1 = ioNow();
    const io = `store read from disk ${((io1.storeRead - io0!.storeRead) / RUNS / 1024).toFixed(0)} KB a call; machine stalled on I/O ${((io1.ioStall - io0!.ioStall) / RUNS / 1000).toFixed(1)} ms, on memory ${((io1.memStall - io0!.memStall) / RUNS / 1000).toFixed(1)} ms a call`;
    const windows = await Promise.all(Object.values(probes).map((p) => p.cut()));
    const commands = windows.map((w) => ({ name: w.name, n: Object.values(w.mongo).reduce((a, b) => a + b, 0) / RUNS, top: Object.entries(w.mongo).sort((a, b) => b[1] - a[1]).slice(0, 3).map(([k, v]) => `${k} ${(v / RUNS).toFixed(1)}`).join(', ') })).filter((c) => c.n >= 0.5).sort((a, b) => b.n - a.n);
    const threads = [...storeThreads()].map(([tid, t]) => ({ name: t.name, us: (t.us - (threads0!.get(tid)?.us ?? 0)) / RUNS })).filter((t) => t.us >= 200).sort((a, b) => b.us - a.us).slice(0, 4);
    lastWhere = `${io}\n      cores ${(m.busyShare * 100).toFixed(0)} %; CPU ms a call: ${Object.entries(m.perCall).filter(([, us]) => us >= 200).sort((a, b) => b[1] - a[1]).map(([k, us]) => `${k} ${(us / 1000).toFixed(1)}`).join(', ')}; store threads: ${threads.map((t) => `${t.name} ${(t.us / 1000).toFixed(1)}`).join(', ') || '—'}\n      store commands a call: ${commands.map((c) => `${c.name} ${c.n.toFixed(1)} (${c.top})`).join('; ') || '—'}`;
  }
  return out;
}
/** `p50 / p95` of a side's timings, or what its failure said. */
const cell = (t: number[] | string) => typeof t === 'string' ? t : `${pct(t, 50).toFixed(1)} / ${pct(t, 95).toFixed(1)}`;
const ratio = (r: Row) => typeof r.small === 'string' || typeof r.large === 'string' ? '—' : (pct(r.large, 50) / pct(r.small, 50)).toFixed(2);
/** Times one read in both workspaces; a side whose call fails (a status, a timeout) is a row saying so, and the table goes on. */
async function side(label: string, read: (ws: { key: string; id: string }) => Promise<unknown>): Promise<void> {
  if (ONLY_FAIRNESS) return;
  let small: number[] | string;
  let large: number[] | string;
  let whereSmall = '';
  if (INTERLEAVE) [small, large] = await alternated(() => read(S), () => read(L));
  else {
    small = await timed(() => read(S)).catch(failure);
    whereSmall = lastWhere;
    large = await timed(() => read(L)).catch(failure);
  }
  const row = { label, small, large };
  table.push(row);
  console.log(`  ${label.padEnd(44)} small ${cell(small)}  large ${cell(large)}  ratio ${ratio(row)}`);
  if (WHERE && !INTERLEAVE) console.log(`    small: ${whereSmall}\n    large: ${lastWhere}`);
  if (BOTH_WAYS) {
    const [s2, l2] = await alternated(() => read(S), () => read(L));
    const row2 = { label: `${label} (alternated)`, small: s2, large: l2 };
    table.push(row2);
    console.log(`  ${row2.label.padEnd(44)} small ${cell(s2)}  large ${cell(l2)}  ratio ${ratio(row2)}`);
  }
  await rowMemory(label);
}

/**
 * BENCH_ROW_MEMORY=1: after each row, every service's probe window is closed (a full collection first) and
 * its resident size, the growth since the last row and the most heap it held in use during the row are
 * printed for the services that grew or peaked — which reads make the growth. The windows are listed in
 * `<run dir>/rows.json` (with CUADRA_PROBE_HEAP=<services> each has a .heapprofile: bench/heap-summary.ts).
 */
const ROW_MEMORY = process.env.BENCH_ROW_MEMORY === '1';
const rowLog: { label: string; services: Record<string, { window: number; rss: number; peak: number; heapTotal: number }> }[] = [];
let lastRss: Record<string, number> = {};
async function rowMemory(label: string): Promise<void> {
  if (!ROW_MEMORY) return;
  const m = (n: number) => Math.round(n / 1048576);
  const cuts = Object.fromEntries(await Promise.all(Object.entries(probes).map(async ([n, p]) => [n, await p.cut()] as const)));
  const services = Object.fromEntries(Object.entries(cuts).map(([n, c]) => [n, { window: c.window, rss: m(c.memory.rss), peak: m(c.memory.heapPeak ?? 0), heapTotal: m(c.memory.heapTotal) }]));
  rowLog.push({ label, services });
  writeFileSync(path.join(runDir, 'rows.json'), JSON.stringify(rowLog, null, 1));
  const shown = Object.entries(services).map(([n, s]) => {
    const d = lastRss[n] === undefined ? 0 : s.rss - lastRss[n];
    return { n, s, d };
  }).filter(({ d, s }) => Math.abs(d) >= 2 || s.peak >= 100);
  lastRss = Object.fromEntries(Object.entries(services).map(([n, s]) => [n, s.rss]));
  console.log(`    memory: ${shown.map(({ n, s, d }) => `${n} ${s.rss} MB (${d >= 0 ? '+' : ''}${d}) heap ${s.heapTotal}, peak ${s.peak}`).join('; ') || 'no service moved'}`);
}

/** The cursor to each workspace's 50th page of 10 (following 49 pages); a workspace whose walk failed is missing. */
async function fiftiethCursors(tool: string, input: Record<string, unknown>): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const w of [S, L]) {
    await part(`${tool} ${JSON.stringify(input)} walk to the 50th page`, async () => {
      let cursor: string | undefined;
      for (let page = 1; page < 50; page++) cursor = (await call(tool, { ...input, limit: 10, ...(cursor ? { cursor } : {}) }, w.key)).next_cursor;
      if (cursor) out.set(w.key, cursor);
    });
  }
  return out;
}
const cursorOf = (cursors: Map<string, string>, w: { key: string }) => {
  const c = cursors.get(w.key);
  if (!c) throw new Error('no cursor to the 50th page');
  return c;
};

let lock = { release() {} };
let S = { key: '', id: '' };
let L = { key: '', id: '' };
let memory: { when: string; mb: Record<string, string> }[] = [{ when: 'system started', mb: await rss(true) }];
try {
  const firstCustomer = new Map<string, string>();
  let other: KeptSeed['workspaces']['other'];
  if (kept) {
    S = { key: kept.workspaces.small.api_key, id: kept.workspaces.small.workspace_id };
    L = { key: kept.workspaces.large.api_key, id: kept.workspaces.large.workspace_id };
    other = kept.workspaces.other;
    firstCustomer.set(S.key, kept.firstCustomer.small).set(L.key, kept.firstCustomer.large);
  } else {
    const small = await sys.workspace('Pequeña SAS');
    const large = await sys.workspace('Grande SAS');
    other = await sys.workspace('Otra SAS');
    S = { key: small.api_key, id: small.workspace_id };
    L = { key: large.api_key, id: large.workspace_id };
    const seedStarted = performance.now();
    const smallParties = await seed(small.workspace_id, SMALL);
    await seedWorkspaceBooks(small.workspace_id, small.api_key, smallParties, SMALL);
    const largeParties = await seed(large.workspace_id, LARGE);
    await seedWorkspaceBooks(large.workspace_id, large.api_key, largeParties, LARGE);
    await seed(other.workspace_id, 200);
    await ledger.countActivity(small.workspace_id, Number.MAX_SAFE_INTEGER);
    await ledger.countActivity(large.workspace_id, Number.MAX_SAFE_INTEGER);
    console.log(`seeding took ${((performance.now() - seedStarted) / 1000).toFixed(0)} s in all`);
    if (!ONLY_FAIRNESS) {
      await compareShapes(small.workspace_id, small.api_key);
      await compareShapes(large.workspace_id, large.api_key);
    }
    // The seeded trigrams serve the search: the unique name is found on the first page of each workspace.
    for (const w of [S, L]) {
      const found = await call('parties.list', { search: 'zurbarán quintero', limit: 25 }, w.key);
      if (!found.rows.some((p: { name: string }) => p.name === UNIQUE)) throw new Error(`the search did not find the seeded unique party in ${w.id}: ${JSON.stringify(found).slice(0, 300)}`);
    }
    firstCustomer.set(S.key, smallParties.customers[1].id).set(L.key, largeParties.customers[1].id);
    if (KEEP) {
      // Stopped, so the store's file is whole when copied; then everything starts again on it, as BENCH_REUSE would.
      const seedKept: KeptSeed = {
        made: new Date().toISOString(),
        env: Object.fromEntries(SEED_ENV.filter((k) => process.env[k] !== undefined).map((k) => [k, process.env[k]!])),
        reuse: { dbPrefix: sys.gatewayDb.replace(/_gateway$/, ''), keys: sys.keys, ledgerKeys: sys.ledgerKeys, sealKey: sys.sealKey },
        workspaces: { small, large, other },
        firstCustomer: { small: smallParties.customers[1].id, large: largeParties.customers[1].id },
        checks: [
          ...(ONLY_FAIRNESS ? [] : ['a party made through the tool and a seeded one have the same fields of the same types, in both workspaces', "the invoices', payments' and bills' shapes compared with a sample made through the tools"]),
          "the tools' sample and the seed's arithmetic agree on the journal lines and rollups",
          'the search finds the seeded unique party in both workspaces',
        ],
      };
      const t0 = performance.now();
      await stopAllOfIt();
      mkdirSync(KEEP, { recursive: true });
      copyFileSync(storeFile, path.join(KEEP, 'scale-h2.mv'));
      writeFileSync(path.join(KEEP, 'seed.json'), JSON.stringify(seedKept, null, 1));
      console.log(`kept the seed in ${KEEP} (${(statSync(storeFile).size / 1e9).toFixed(2)} GB) in ${((performance.now() - t0) / 1000).toFixed(1)} s; starting again on it`);
      await startAll(seedKept.reuse);
      memory = [{ when: 'system started (again)', mb: await rss(true) }];
    }
  }
  if (PAUSE_S > 0) {
    console.log(`(pausing ${PAUSE_S} s before the timed phase; uptime: ${loadavg().map((x) => x.toFixed(2)).join(' ')})`);
    await new Promise((r) => setTimeout(r, PAUSE_S * 1000));
  }
  lock = await holdLock(process.env.BENCH_LOCK);
  memory.push({ when: 'seeded, before the reads', mb: await rss(true) });
  await rowMemory('(before the reads)');

  // BENCH_TABLES=2: the reads table twice in one run, BENCH_PAUSE_BETWEEN_S (default 300) apart, the lock let go meanwhile:
  // the same reads on the same store soon after the seed and once it has settled.
  let cursors = new Map<string, string>();
  const reads = async () => {
    console.log(`\nreads (ms), ${RUNS} runs each after 2 warm-ups:`);
    await side('parties.list first page', (w) => call('parties.list', { limit: 25 }, w.key));
    await side('parties.list kind=vendor', (w) => call('parties.list', { kind: 'vendor', limit: 25 }, w.key));
    await side('parties.list search (one match)', (w) => call('parties.list', { search: 'zurbarán quintero', limit: 25 }, w.key));
    // What finding that one party costs: the pages followed until it is on one (a walk answers empty pages with a cursor).
    let pagesToMatch: Record<string, number> = {};
    await side('parties.list search, every page to the match', async (w) => {
      let cursor: string | undefined;
      let pages = 0;
      for (;;) {
        const page = await call('parties.list', { search: 'zurbarán quintero', limit: 25, ...(cursor ? { cursor } : {}) }, w.key);
        pages++;
        if (page.rows.some((p: { name: string }) => p.name === UNIQUE) || !page.next_cursor) break;
        cursor = page.next_cursor;
      }
      pagesToMatch = { ...pagesToMatch, [w.key === S.key ? 'small' : 'large']: pages };
    });
    console.log(`    pages followed to the match: ${JSON.stringify(pagesToMatch)}`);
    await side('records.list parties search', (w) => call('records.list', { source: 'parties', search: 'zurbarán quintero', limit: 25 }, w.key));
    await side('records.list parties first page', (w) => call('records.list', { source: 'parties', limit: 25 }, w.key));
    cursors = await fiftiethCursors('parties.list', {});
    await side('parties.list 50th page by cursor', (w) => call('parties.list', { limit: 10, cursor: cursorOf(cursors, w) }, w.key));
    await side('metrics.query activity (default window)', (w) => call('metrics.query', { metric: 'activity' }, w.key));
    await side('metrics.query activity 366 days by month', (w) => call('metrics.query', { metric: 'activity', days: 366, interval: 'month' }, w.key));
    await side('ledger.list first page', (w) => call('ledger.list', { limit: 50 }, w.key));
    await side('ledger.list tool filter (1 in 100)', (w) => call('ledger.list', { tool: 'parties.update', limit: 50 }, w.key));
    await side('ledger.verify routine', (w) => call('ledger.verify', {}, w.key));

    // Receivables and payables: records, metrics (default window, 366 days by month, as_of), the agenda and a 10-block dashboard.
    await side('records.list invoices first page', (w) => call('records.list', { source: 'invoices', limit: 25 }, w.key));
    await side('records.list invoices status=posted', (w) => call('records.list', { source: 'invoices', status: 'posted', limit: 25 }, w.key));
    await side('records.list invoices search (one match)', (w) => call('records.list', { source: 'invoices', search: 'zurbarán quintero', limit: 25 }, w.key));
    const invoiceCursors = await fiftiethCursors('records.list', { source: 'invoices' });
    await side('records.list invoices 50th page by cursor', (w) => call('records.list', { source: 'invoices', limit: 10, cursor: cursorOf(invoiceCursors, w) }, w.key));
    await side('records.list payments first page', (w) => call('records.list', { source: 'payments', limit: 25 }, w.key));
    await side('records.list bills first page', (w) => call('records.list', { source: 'bills', limit: 25 }, w.key));
    await side('records.list bills status=posted', (w) => call('records.list', { source: 'bills', status: 'posted', limit: 25 }, w.key));
    const today = localDate(new Date());
    for (const metric of ['revenue', 'ar_outstanding', 'invoices_status', 'top_customers', 'expenses', 'ap_outstanding', 'top_vendors']) {
      await side(`metrics.query ${metric} (default window)`, (w) => call('metrics.query', { metric }, w.key));
      await side(`metrics.query ${metric} 366 days by month`, (w) => call('metrics.query', { metric, days: 366, interval: 'month' }, w.key));
    }
    for (const metric of ['ar_aging', 'ap_aging', 'ar_outstanding']) await side(`metrics.query ${metric} as_of today`, (w) => call('metrics.query', { metric, as_of: today }, w.key));
    await side('agenda, every lane (60 days)', (w) => call('dashboards.render', { blocks: [{ type: 'agenda', agenda: { days: 60 } }] }, w.key));
    const tenBlocks = [
      { type: 'stats', title: 'Resumen', items: [{ label: 'Revenue', query: { metric: 'revenue', compare: 'previous_period' } }, { label: 'Receivables', query: { metric: 'ar_outstanding' } }, { label: 'Payables', query: { metric: 'ap_outstanding' } }] },
      { type: 'chart', title: 'Revenue by month', chart: 'bar', query: { metric: 'revenue', days: 366, interval: 'month' } },
      { type: 'chart', title: 'Invoices by status', chart: 'pie', query: { metric: 'invoices_status' } },
      { type: 'table', title: 'Top customers', query: { metric: 'top_customers', limit: 5 } },
      { type: 'table', title: 'Top vendors', query: { metric: 'top_vendors', limit: 5 } },
      { type: 'chart', title: 'Aging', chart: 'bar', query: { metric: 'ar_aging' } },
      { type: 'records', title: 'Customers', records: { source: 'parties', kind: 'customer' } },
      { type: 'records', title: 'Invoices', records: { source: 'invoices', limit: 10 } },
      { type: 'records', title: 'Bills', records: { source: 'bills', limit: 10 } },
      { type: 'agenda', title: 'Agenda', agenda: { days: 30 } },
    ];
    await side('dashboards.render (10 blocks)', (w) => call('dashboards.render', { blocks: tenBlocks }, w.key));

    let n = 0;
    await side('parties.create (a write)', (w) => call('parties.create', { name: `Nueva ${n++} SAS`, kind: 'customer' }, w.key));
    await side('invoices.create + invoices.post (writes)', async (w) => {
      const draft = (await call('invoices.create', { customer_id: firstCustomer.get(w.key), currency: 'COP', lines: [{ description: 'Nueva', quantity: 1, unit_price: 1_000_000, tax_rate_ppm: 190000 }] }, w.key)).invoice;
      await call('invoices.post', { id: draft.id }, w.key);
    });
  };
  for (let pass = 1; pass <= TABLES; pass++) {
    if (pass > 1) {
      earlier.push({ when: `table ${pass - 1}`, rows: table.splice(0) });
      lock.release();
      console.log(`\n(table ${pass - 1} done; pausing ${PAUSE_BETWEEN_S} s without the lock; uptime: ${loadavg().map((x) => x.toFixed(2)).join(' ')})`);
      await new Promise((r) => setTimeout(r, PAUSE_BETWEEN_S * 1000));
      lock = await holdLock(process.env.BENCH_LOCK);
    }
    await reads();
  }

  // Another workspace while 16 connections read the large one — and where its call waits: the same
  // read timed at each layer it crosses, interleaved so every layer sees the same load (the whole
  // REST call; straight at crm's /invoke with a signed assertion, no gateway; the store alone, the
  // page's query from this process; a Redis round trip). BENCH_HEAVY (default `all`) names the
  // loads, one phase each: `all` (the four heavy reads below in turn) or one of them alone, to tell
  // which read slows the others.
  let idle: number[] = [];
  let busy: number[] = [];
  await part('another workspace under load', async () => {
    const otherPrincipal = { workspace: other.workspace_id, role: 'owner', actor: { type: 'api_key', id: other.key_id }, credential_id: other.key_id, scopes: null, patterns: null };
    const crmInvoke = async () => {
      const r = await fetch(`${sys.subgraphs.crm.url}${TOOL_INVOKE_PATH}`, {
        method: 'POST', headers: { 'content-type': 'application/json', [ASSERTION_HEADER]: signAssertion(otherPrincipal as never, sys.keys.privateKey) },
        body: JSON.stringify({ tool: 'parties.list', input: { limit: 25 } }),
      });
      if (r.status !== 200) throw new Error(`crm /invoke parties.list → ${r.status} ${(await r.text()).slice(0, 300)}`);
      await r.arrayBuffer();
    };
    const probeParty = (await call('parties.list', { limit: 1 }, other.api_key)).rows[0].id;
    const redisClient = new Redis(redis.url, { lazyConnect: true });
    await redisClient.connect();
    /** The gateways the phases go through: the system's own, and with `BENCH_PACE_AB=1` one without pacing beside it, taken in turn. */
    // (With two, both are called the same way: straight by fetch, without `sys.invoke`'s output-schema check in this process.)
    const gateways: { label: string; url?: string; pid?: number }[] = [PACE_AB ? { label: `paced (FAIR_SHARE_PACE=${fairShareFromEnv().pace})`, url: sys.gatewayUrl } : { label: '' }];
    if (PACE_AB) {
      const unpaced = await sys.startAnotherGateway({ FAIR_SHARE_PACE: '0' });
      gateways.push({ label: 'not paced (FAIR_SHARE_PACE=0)', url: unpaced.url, pid: unpaced.pid });
    }
    type Gateway = (typeof gateways)[number];
    const layersOf = (g: Gateway): Record<string, () => Promise<unknown>> => ({
      'REST (gateway → crm)': () => call('parties.list', { limit: 25 }, other.api_key, g.url),
      'crm /invoke, no gateway': crmInvoke,
      'store: one party by _id': () => crmDb.collection('parties').findOne({ _id: probeParty }),
      // A durable write, as the ledger entry every call appends is (H2 answers it once it is on disk).
      'store: one durable write': () => crmDb.collection('bench_probe').updateOne({ _id: 'probe' } as never, { $inc: { n: 1 } }, { upsert: true }),
      'Redis PING': () => redisClient.ping(),
    });
    /** Each layer's timings, `RUNS` calls each after 2 warm-ups, taken in turn. */
    const eachLayer = async (layers: Record<string, () => Promise<unknown>>): Promise<Record<string, number[]>> => {
      const out: Record<string, number[]> = Object.fromEntries(Object.keys(layers).map((k) => [k, []]));
      for (let i = 0; i < RUNS + 2; i++) {
        for (const [k, fn] of Object.entries(layers)) {
          const t0 = performance.now();
          await fn();
          if (i >= 2) out[k].push(performance.now() - t0);
        }
      }
      return out;
    };
    const heavyReadsOf = (g: Gateway): Record<string, () => Promise<unknown>> => ({
      'ledger.list tool filter': () => call('ledger.list', { tool: 'parties.update', limit: 50 }, L.key, g.url),
      'parties.list search': () => call('parties.list', { search: 'zurbarán quintero' }, L.key, g.url),
      'activity 366 days by month': () => call('metrics.query', { metric: 'activity', days: 366, interval: 'month' }, L.key, g.url),
      'parties.list 50th page': () => call('parties.list', { limit: 25, cursor: cursors.get(L.key) }, L.key, g.url),
    });
    const heavyNames = Object.keys(heavyReadsOf(gateways[0]));
    // Where the machine's CPU goes during each phase (every process, from /proc), per heavy read served.
    const meter = new MachineMeter({ ...services, ...Object.fromEntries(gateways.filter((g) => g.pid).map((g) => [`gateway ${g.label}`, g.pid!])), mongo: mongo.pid, redis: redis.pid, 'bench (load and probes)': process.pid });
    const mixes = (process.env.BENCH_HEAVY ?? 'all').split(',').map((m) => m.trim());
    const idleBy = new Map<Gateway, Record<string, number[]>>();
    for (const g of gateways) idleBy.set(g, await eachLayer(layersOf(g)));
    idle = idleBy.get(gateways[0])!['REST (gateway → crm)'];
    busy = idle;
    const fairness: string[] = [];
    for (const mix of mixes) {
      const names = mix === 'all' ? heavyNames : heavyNames.filter((k) => k.startsWith(mix));
      if (names.length === 0) throw new Error(`BENCH_HEAVY: no heavy read starts with "${mix}" (${heavyNames.join('; ')})`);
      // With two gateways, two phases each, alternated (paced, not paced, paced, not paced): the machine's other work falls on both alike.
      const phases = PACE_AB ? [...gateways, ...gateways] : gateways;
      const pooled = new Map<Gateway, { layers: Record<string, number[]>; done: number; refused: number; failed: string[]; seconds: number; machine: string[] }>();
      for (const g of phases) {
        const heavyReads = heavyReadsOf(g);
        let stop = false;
        let heavyDone = 0;
        let heavyRefused = 0;
        const heavyFailed: string[] = [];
        const load = Array.from({ length: 16 }, async (_, i) => {
          while (!stop) {
            try {
              await heavyReads[names[i % names.length]]();
              heavyDone++;
            } catch (err) {
              // Past its fair share the large workspace is told to wait (429 rate_limited): counted, not fatal.
              if (/→ 429 /.test((err as Error).message)) heavyRefused++;
              else heavyFailed.push(failure(err));
            }
          }
        });
        const t0 = performance.now();
        meter.begin();
        const busyLayers = await eachLayer(layersOf(g));
        const machine = meter.end(heavyDone);
        const seconds = (performance.now() - t0) / 1000;
        stop = true;
        await Promise.all(load);
        const sum = pooled.get(g) ?? { layers: Object.fromEntries(Object.keys(busyLayers).map((k) => [k, [] as number[]])), done: 0, refused: 0, failed: [], seconds: 0, machine: [] };
        for (const [k, v] of Object.entries(busyLayers)) sum.layers[k].push(...v);
        sum.done += heavyDone;
        sum.refused += heavyRefused;
        sum.failed.push(...heavyFailed);
        sum.seconds += seconds;
        sum.machine.push(`cores ${(machine.busyShare * 100).toFixed(0)} % busy; CPU ms per heavy read: ${Object.entries(machine.perCall).filter(([, us]) => us >= 100).sort((a, b) => b[1] - a[1]).map(([k, us]) => `${k} ${(us / 1000).toFixed(1)}`).join(', ')}`);
        pooled.set(g, sum);
      }
      for (const g of gateways) {
        const sum = pooled.get(g)!;
        const idleLayers = idleBy.get(g)!;
        if (mix === mixes[0] && g === gateways[0]) busy = sum.layers['REST (gateway → crm)'];
        fairness.push(`  under 16 connections of ${mix === 'all' ? 'the four heavy reads' : names[0]}${g.label ? `, ${g.label}` : ''} (${(sum.done / sum.seconds).toFixed(1)} served/s, ${sum.refused} refused 429${sum.failed.length ? `, ${sum.failed.length} failed, the first ${sum.failed[0]}` : ''}):`);
        for (const line of sum.machine) fairness.push(`    ${line}`);
        for (const k of Object.keys(idleLayers)) fairness.push(`    ${k.padEnd(26)} idle p50 ${pct(idleLayers[k], 50).toFixed(1).padStart(6)} p95 ${pct(idleLayers[k], 95).toFixed(1).padStart(6)}  busy p50 ${pct(sum.layers[k], 50).toFixed(1).padStart(6)} p95 ${pct(sum.layers[k], 95).toFixed(1).padStart(6)} ms  ratio ${(pct(sum.layers[k], 50) / pct(idleLayers[k], 50)).toFixed(2)}`);
      }
    }
    redisClient.disconnect();
    console.log(`\nanother workspace's parties.list, by layer; ${describeFairShare(16)}; load on the machine ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
    for (const line of fairness) console.log(line);
  });
  await rowMemory('another workspace under load');
  // The full walks last: one a minute per workspace, and a walk the gateway gave up on may still run in its service.
  const fullVerify: Record<string, string> = {};
  if (!ONLY_FAIRNESS) {
    for (const [name, w, entries] of [['small', S, entriesOf(SMALL)], ['large', L, entriesOf(LARGE)]] as const) {
      const t0 = performance.now();
      try {
        // A long chain answers in pages (each well under the gateway's 60 s): the walk is every page, cursor after cursor.
        let r = await call('ledger.verify', { full: true }, w.key);
        while (r.ok && r.next_cursor) r = await call('ledger.verify', { full: true, cursor: r.next_cursor }, w.key);
        const ms = performance.now() - t0;
        fullVerify[name] = `${r.ok ? 'ok' : `not ok (${JSON.stringify(r).slice(0, 200)})`} in ${(ms / 1000).toFixed(1)} s, ${((ms * 1000) / entries).toFixed(1)} µs/entry`;
      } catch (err) {
        fullVerify[name] = failure(err);
      }
      // The same walk by the services' own Ledger in this process, without the gateway: what it costs per entry.
      const t1 = performance.now();
      const direct = await (async () => {
        let v = await ledger.verify(w.id, { full: true });
        while (v.ok && v.next_cursor) v = await ledger.verify(w.id, { full: true, cursor: v.next_cursor });
        return v;
      })().catch((err: Error) => ({ ok: `threw ${err.message}` }));
      const ms = performance.now() - t1;
      fullVerify[`${name}, in process`] = `${(direct as { ok: unknown }).ok === true ? 'ok' : JSON.stringify(direct).slice(0, 200)} in ${(ms / 1000).toFixed(1)} s, ${((ms * 1000) / entries).toFixed(1)} µs/entry`;
    }
    console.log(`\nledger.verify full (${entriesOf(SMALL).toLocaleString('en')} and ${entriesOf(LARGE).toLocaleString('en')} entries): ${JSON.stringify(fullVerify, null, 1)}`);
  }
  await rowMemory('ledger.verify full');
  memory.push({ when: 'after the reads and the load', mb: await rss(true) });
  // And after a rest: what a service keeps once idle (an idle service gives back the heap pages a burst left: shared/src/memory-trim.ts).
  const REST_MS = Number(process.env.BENCH_REST_MS ?? 12_000);
  if (REST_MS > 0) {
    await new Promise((r) => setTimeout(r, REST_MS));
    memory.push({ when: `after ${(REST_MS / 1000).toFixed(0)} s of rest`, mb: await rss(true) });
  }

  for (const e of earlier) {
    console.log(`\n${e.when} (the reads alone):\n| operation | small p50 / p95 ms | large p50 / p95 ms | ratio (p50) |`);
    console.log('| --- | --- | --- | --- |');
    for (const r of e.rows) console.log(`| ${r.label} | ${cell(r.small)} | ${cell(r.large)} | ${ratio(r)} |`);
    console.log(`  over 1.5: ${e.rows.filter((r) => Number(ratio(r)) > 1.5).length} of ${e.rows.length}`);
  }
  if (earlier.length) console.log(`\ntable ${earlier.length + 1}:`);
  console.log(`\n| operation | small p50 / p95 ms | large p50 / p95 ms | ratio (p50) |`);
  console.log('| --- | --- | --- | --- |');
  for (const r of table) console.log(`| ${r.label} | ${cell(r.small)} | ${cell(r.large)} | ${ratio(r)} |`);
  if (!ONLY_FAIRNESS) console.log(`| ledger.verify full (REST) | ${fullVerify.small} | ${fullVerify.large} | per entry |`);
  if (!ONLY_FAIRNESS) console.log(`| ledger.verify full (in process) | ${fullVerify['small, in process']} | ${fullVerify['large, in process']} | per entry |`);
  if (idle.length) console.log(`| another workspace under load${PACE_AB ? ', paced (the first heavy load)' : ''} | ${cell(idle)} idle | ${cell(busy)} busy | ${(pct(busy, 50) / pct(idle, 50)).toFixed(2)} |`);
  console.log(`  over 1.5 at p50: ${table.filter((r) => Number(ratio(r)) > 1.5).length} of ${table.length} reads and writes`);
  for (const note of notes) console.log(`  (${note})`);
  console.log(`(load average at the end of the timed phase: ${loadavg().map((x) => x.toFixed(2)).join(' ')})`);
  console.log(`\nresident memory (MB; a service's V8 heap in use after a full collection in brackets): ${Object.keys(memory[0].mb).join(', ')}`);
  for (const m of memory) console.log(`  ${m.when.padEnd(28)} ${Object.values(m.mb).join(', ')}`);
  const grew = Object.keys(memory[0].mb).map((k) => [k, Number.parseInt(memory[2].mb[k], 10) - Number.parseInt(memory[1].mb[k], 10)] as const);
  console.log(`  grew serving reads: ${grew.map(([k, d]) => `${k} ${d >= 0 ? '+' : ''}${d}`).join(', ')} MB`);
  if (memory[3]) {
    const kept = Object.keys(memory[0].mb).map((k) => [k, Number.parseInt(memory[3].mb[k], 10) - Number.parseInt(memory[1].mb[k], 10)] as const);
    console.log(`  grew, after the rest: ${kept.map(([k, d]) => `${k} ${d >= 0 ? '+' : ''}${d}`).join(', ')} MB`);
  }
  console.log(`  where (MB; V8's committed heap and young generation, glibc's main arena (brk) and other arenas, other anonymous mappings — V8's pages among them — and files; ${memory.map((x) => x.when).join(' / ')}):`);
  for (const n of Object.keys(services)) console.log(`    ${n.padEnd(9)} ${where.map((w) => w[n]).join(' / ')}`);
} finally {
  lock.release();
  await stopAllOfIt();
}
