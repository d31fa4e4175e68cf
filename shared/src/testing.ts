import { randomBytes } from 'node:crypto';
import { generateSigningKeyPair, newId, signAssertion, ASSERTION_HEADER } from './credentials.ts';
import { connectDatabase } from './db.ts';
import { createAjv } from './validation.ts';
import type { ValidateFunction } from 'ajv';
import { createLogger } from './logger.ts';
import type { Principal } from './principal.ts';
import type { SubgraphDeps, SubgraphServer } from './subgraph.ts';
import type { FairShare } from './fair-share.ts';
import { toolMutationName } from './subgraph.ts';
import mongoose, { type Connection } from 'mongoose';
import { Governance } from './governance/index.ts';
import { RUN_FIELD, runScope } from './governance/runs.ts';

let keys: { privateKey: string; publicKey: string } | undefined;

const outputAjv = createAjv();
const outputValidators = new Map<string, ValidateFunction>();

/**
 * Checks a tool's real output against the output schema it declares (issue 15: every tool's
 * output schema is published, and the tests hold the outputs to it). Throws with ajv's errors.
 */
export function checkOutput(tool: string, schema: unknown, output: unknown): void {
  if (!schema) return;
  let validate = outputValidators.get(tool);
  if (!validate) {
    validate = outputAjv.compile(schema as object);
    outputValidators.set(tool, validate);
  }
  if (!validate(output)) {
    throw new Error(`The output of ${tool} does not match its declared output schema: ${outputAjv.errorsText(validate.errors, { dataVar: 'output' })}\n${JSON.stringify(output).slice(0, 2000)}`);
  }
}

/** One ES256 key pair per test process, standing in for the gateway's. */
export function testSigningKeys(): { privateKey: string; publicKey: string } {
  keys ??= generateSigningKeyPair();
  return keys;
}

let serviceKeys: { privateKey: string; publicKey: string } | undefined;

/** One ES256 key pair per test process for service assertions (subgraph → subgraph reads). */
export function testServiceKeys(): { privateKey: string; publicKey: string } {
  serviceKeys ??= generateSigningKeyPair();
  return serviceKeys;
}

/** A principal of a fresh workspace (owner API key unless overridden). */
export function testPrincipal(overrides: Partial<Principal> = {}): Principal {
  return {
    workspace: newId('ws'),
    role: 'owner',
    actor: { type: 'api_key', id: newId('key') },
    credential_id: newId('key'),
    scopes: null,
    patterns: null,
    ...overrides,
  };
}

/** The result of a tool call made straight at a subgraph. */
export interface SubgraphCall {
  ok: boolean;
  /** The tool's output when `ok`. */
  output?: any;
  code?: string;
  field?: string;
  message?: string;
  httpStatus: number;
  /** Held for approval (202). */
  pending?: boolean;
  approvalId?: string;
  replayed?: boolean;
}

/** A subgraph started on a throwaway database, listening on a free port. */
export interface TestSubgraph {
  /** The subgraph's name (its graph fields are named after it: `<name>Records`…). */
  name: string;
  url: string;
  db: Connection;
  governance: Governance;
  /** Runs the approval sweep once (tests drive it by hand instead of waiting for the timer). */
  sweep(): Promise<void>;
  call(tool: string, input: unknown, principal: Principal, options?: { idempotencyKey?: string; approvalId?: string; dryRun?: boolean }): Promise<SubgraphCall>;
  /** {@link call}'s output; anything but a 200 thrown with its code, field and message (as a system's `output`). */
  output(tool: string, input: unknown, principal: Principal): Promise<any>;
  graphql(query: string, variables: Record<string, unknown>, principal: Principal | null): Promise<{ status: number; body: any }>;
  close(): Promise<void>;
}

/**
 * Starts a subgraph as its own team would test it: real MongoDB-protocol server
 * (`MONGO_URL`, started by the test runner), a database named after the test, real HTTP.
 */
export async function startTestSubgraph(
  name: string,
  createServer: (deps: SubgraphDeps) => Promise<SubgraphServer>,
  options: { peers?: Record<string, Pick<TestSubgraph, 'url'>>; monitorCommands?: boolean; fairShare?: FairShare } = {},
): Promise<TestSubgraph> {
  const mongoUrl = process.env.MONGO_URL;
  if (!mongoUrl) throw new Error('MONGO_URL is not set: run tests with `npm test` (it starts the servers).');
  const suffix = randomBytes(4).toString('hex');
  const db = await connectDatabase(mongoUrl, `test_${name}_${suffix}`, { monitorCommands: options.monitorCommands });
  const governanceDb = await connectDatabase(mongoUrl, `test_${name}_${suffix}_governance`, { monitorCommands: options.monitorCommands });
  const governance = new Governance(governanceDb);
  await governance.init();
  // Each peer's URL is read when it is called: two subgraphs that call each other are started one after the other.
  const urls: Record<string, string> = {};
  for (const [peer, sg] of Object.entries(options.peers ?? {})) Object.defineProperty(urls, peer, { get: () => sg.url, enumerable: true });
  const server = await createServer({ db, log: createLogger(name, process.env.LOG_LEVEL ?? 'silent'), assertionPublicKey: testSigningKeys().publicKey, governance, runApprovals: false, fairShare: options.fairShare,
    peers: { ...testServiceKeys(), urls } });
  const { url } = await server.listen(0);

  async function graphql(query: string, variables: Record<string, unknown>, principal: Principal | null) {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (principal) headers[ASSERTION_HEADER] = signAssertion(principal, testSigningKeys().privateKey);
    const res = await fetch(`${url}/graphql`, { method: 'POST', headers, body: JSON.stringify({ query, variables }) });
    return { status: res.status, body: (await res.json()) as any };
  }

  const subgraph: TestSubgraph = {
    name,
    url,
    db,
    governance,
    graphql,
    sweep: () => server.owner.sweep(),
    async call(tool, input, principal, options = {}) {
      const mutation = toolMutationName(name);
      const { status, body } = await graphql(
        `mutation($tool: String!, $input: JSON!, $key: String, $approval: String, $dry: Boolean) { ${mutation}(tool: $tool, input: $input, idempotencyKey: $key, approvalId: $approval, dryRun: $dry) }`,
        { tool, input, key: options.idempotencyKey ?? null, approval: options.approvalId ?? null, dry: options.dryRun ?? null },
        principal,
      );
      if (body.errors?.length) {
        const e = body.errors[0];
        return { ok: false, code: e.extensions?.code, field: e.extensions?.field, message: e.message, httpStatus: status };
      }
      if (!body.data) return { ok: false, code: body.code, message: body.error, httpStatus: status };
      const answer = body.data[mutation] as { status: number; body: Record<string, any>; replayed?: boolean };
      // A dry run's answer: what the call would do (`dry_run`), in `output`.
      if (answer.status === 200 && options.dryRun) return { ok: true, output: answer.body.dry_run, httpStatus: 200 };
      if (answer.status === 200) {
        checkOutput(tool, server.registry.get(tool)?.output, answer.body.output);
        return { ok: true, output: answer.body.output, httpStatus: 200, replayed: answer.replayed };
      }
      if (answer.status === 202) return { ok: false, pending: true, approvalId: answer.body.approval_id, httpStatus: 202, replayed: answer.replayed };
      return { ok: false, code: answer.body.code, field: answer.body.field, message: answer.body.error, approvalId: answer.body.approval_id, httpStatus: answer.status, replayed: answer.replayed };
    },
    async output(tool, input, principal) {
      const r = await subgraph.call(tool, input, principal);
      if (!r.ok) throw new Error(`${tool}: ${r.httpStatus} ${r.code} ${r.field ?? ''} ${r.message ?? ''}`);
      return r.output;
    },
    async close() {
      await server.stop();
      await db.dropDatabase().catch(() => undefined);
      await governanceDb.dropDatabase().catch(() => undefined);
      await Promise.all([db.close(), governanceDb.close()]);
    },
  };
  return subgraph;
}

/** Every document of every collection of a database as one JSON text: where a leaked secret would show. */
export async function dumpDatabase(db: Connection): Promise<string> {
  const parts: string[] = [];
  for (const { name } of await db.db!.listCollections().toArray()) parts.push(JSON.stringify(await db.db!.collection(name).find({}).toArray()));
  return parts.join('\n');
}

/** Commands of the MongoDB wire protocol that change data, indexes or collections. */
export const WRITE_COMMANDS: ReadonlySet<string> = new Set(['insert', 'update', 'delete', 'findAndModify', 'create', 'createIndexes', 'drop', 'dropDatabase', 'dropIndexes', 'renameCollection', 'collMod']);

/**
 * Runs `work` and answers the write commands the service's two connections (its own database and
 * the governance one: ledger, approvals, idempotency) sent meanwhile, as `<database>.<collection>
 * <command>` — how a dry run is shown to write nothing. The subgraph must be started with
 * `monitorCommands: true`.
 */
export async function writesDuring(sg: Pick<TestSubgraph, 'db' | 'governance'>, work: () => Promise<unknown>): Promise<string[]> {
  const writes: string[] = [];
  const listener = (e: { commandName: string; command: Record<string, unknown>; databaseName: string }) => {
    if (WRITE_COMMANDS.has(e.commandName)) writes.push(`${e.databaseName}.${String(e.command[e.commandName])} ${e.commandName}`);
  };
  const clients = [sg.db.getClient(), sg.governance.db.getClient()];
  for (const c of clients) c.on('commandStarted', listener);
  try {
    await work();
  } finally {
    for (const c of clients) c.off('commandStarted', listener);
  }
  return writes;
}

/** A write command a read sent: which read, which command, on which collection. */
export interface WriteSeen {
  read: string;
  command: string;
  collection: unknown;
}

/** What {@link writesOfEveryRead} ran: each read's label and whether it answered (else its code). */
export interface ReadRun {
  read: string;
  ok: boolean;
  code?: string;
}

/**
 * A minimal input a JSON Schema accepts: the required fields only, the first of an enum, a date
 * for a date, the minimum of a number. Reads whose refusals would hide their work get real
 * inputs from the caller instead.
 */
export function sampleInput(schema: any): unknown {
  if (!schema || typeof schema !== 'object') return undefined;
  if (schema.const !== undefined) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(alternatives)) return sampleInput(alternatives[0]);
  const type = Array.isArray(schema.type) ? schema.type.find((t: string) => t !== 'null') : schema.type;
  switch (type) {
    case 'object': return Object.fromEntries((schema.required ?? []).map((k: string) => [k, sampleInput(schema.properties?.[k])]));
    case 'array': return Array.from({ length: schema.minItems ?? 0 }, () => sampleInput(schema.items));
    case 'string': return schema.format === 'date' ? '2026-10-15' : schema.format === 'date-time' ? '2026-10-15T12:00:00Z' : 'x'.repeat(Math.max(schema.minLength ?? 1, 1));
    case 'integer': case 'number': return schema.minimum ?? 1;
    case 'boolean': return false;
    default: return {};
  }
}

/**
 * Runs every read a subgraph answers — each read tool, records source, metric, agenda lane and
 * board of its modules — one after another, with the driver's command monitoring on (start the
 * subgraph with `monitorCommands: true`), and returns every write command its database connection
 * sent meanwhile, with the read that sent it. Read tools take `inputs[tool]`, else
 * {@link sampleInput} of their schema; metrics `metric` merged into `{metric}`; lanes `window`;
 * boards `board` merged into `{board}`.
 */
export async function writesOfEveryRead(
  sg: TestSubgraph,
  owned: { tools: readonly { name: string; risk: string; input: unknown }[]; readers: { sources: object; metrics: object; agenda: object; boards?: object } },
  principal: Principal,
  options: { inputs?: Record<string, Record<string, unknown>>; metric?: Record<string, unknown>; window?: Record<string, unknown>; board?: Record<string, unknown>; records?: Record<string, unknown> } = {},
): Promise<{ runs: ReadRun[]; writes: WriteSeen[] }> {
  const client = sg.db.getClient();
  const writes: WriteSeen[] = [];
  const runs: ReadRun[] = [];
  let current = '';
  const listener = (e: { commandName: string; command: Record<string, unknown> }) => {
    if (WRITE_COMMANDS.has(e.commandName)) writes.push({ read: current, command: e.commandName, collection: e.command[e.commandName] });
  };
  const field = (kind: string) => `${sg.name}${kind}`;
  const graph = async (label: string, query: string, variables: Record<string, unknown>, key: string) => {
    const { body } = await sg.graphql(query, variables, principal);
    runs.push(body.errors?.length ? { read: label, ok: false, code: body.errors[0].extensions?.code } : { read: label, ok: body.data?.[key] != null });
  };
  const reads: [string, () => Promise<void>][] = [
    ...owned.tools.filter((t) => t.risk === 'read').map((t): [string, () => Promise<void>] => [`tool ${t.name}`, async () => {
      const r = await sg.call(t.name, options.inputs?.[t.name] ?? sampleInput(t.input), principal);
      runs.push(r.ok ? { read: `tool ${t.name}`, ok: true } : { read: `tool ${t.name}`, ok: false, code: r.code });
    }]),
    ...Object.keys(owned.readers.sources).map((source): [string, () => Promise<void>] => [`source ${source}`, () => graph(`source ${source}`, `query($q: JSON!) { ${field('Records')}(query: $q) }`, { q: { source, ...options.records } }, field('Records'))]),
    ...Object.keys(owned.readers.metrics).map((metric): [string, () => Promise<void>] => [`metric ${metric}`, () => graph(`metric ${metric}`, `query($q: JSON!) { ${field('Metric')}(query: $q) }`, { q: { metric, ...options.metric } }, field('Metric'))]),
    ...Object.keys(owned.readers.agenda).map((lane): [string, () => Promise<void>] => [`lane ${lane}`, () => graph(`lane ${lane}`, `query($w: JSON!) { ${field('Agenda')}(lane: "${lane}", window: $w) }`, { w: options.window ?? {} }, field('Agenda'))]),
    ...Object.keys(owned.readers.boards ?? {}).map((board): [string, () => Promise<void>] => [`board ${board}`, () => graph(`board ${board}`, `query($q: JSON!) { ${field('Board')}(query: $q) }`, { q: { board, ...options.board } }, field('Board'))]),
  ];
  client.on('commandStarted', listener);
  try {
    for (const [label, run] of reads) {
      current = label;
      await run();
    }
  } finally {
    client.off('commandStarted', listener);
  }
  return { runs, writes };
}

/** A dead attempt's insert held back ({@link holdNextInsert}). */
export interface HeldInsert {
  /** Resolves when the attempt sent its insert (the attempt then dies: its call answers outcome_unknown). */
  reached: Promise<void>;
  /** Lets the insert reach the store; resolves once the store answered it (stored, or refused as a duplicate). */
  land(): Promise<'stored' | 'duplicate'>;
}

/** Runs killed by {@link holdNextInsert}: every write they try after is refused unsent. */
const killedRuns = new WeakSet<object>();
let refusingKilledWrites = false;

/**
 * Refuses, from now on in this process, every write a killed run tries ({@link killedRuns}): a
 * killed process sends nothing after its last command — not the hold a failed insert's handler
 * would release (rentals.create), nor any other clean-up. Wraps the collection layer once.
 */
function refuseKilledWrites(): void {
  if (refusingKilledWrites) return;
  refusingKilledWrites = true;
  const proto = (mongoose.Collection as unknown as { prototype: Record<string, unknown> }).prototype;
  for (const method of ['insertOne', 'insertMany', 'updateOne', 'updateMany', 'findOneAndUpdate', 'replaceOne', 'findOneAndReplace', 'deleteOne', 'deleteMany', 'findOneAndDelete', 'bulkWrite']) {
    const original = proto[method] as ((...args: unknown[]) => unknown) | undefined;
    if (typeof original !== 'function') continue;
    proto[method] = function killedRunWrite(this: unknown, ...args: unknown[]) {
      const run = runScope.getStore();
      if (run && killedRuns.has(run)) return Promise.reject(new Error('the process was killed'));
      return original.apply(this, args);
    };
  }
}

/**
 * Holds the next insert into `collection` of a document of `workspace`, as the store's receive
 * buffer holds a killed process's last command: the document as the attempt sent it (with its run
 * stamp, runs.ts), applied only when the test says ({@link HeldInsert.land}). The attempt itself
 * goes no further: its handler fails right there, and every write its failure path would make (an
 * announced intent taken back, a claimed hold released) is refused unsent, as a killed process sends nothing after
 * (subgraphs/invoices/test/payments-late-write.test.ts tells the story).
 */
export function holdNextInsert(sg: Pick<TestSubgraph, 'db'>, collection: string, workspace: string): HeldInsert {
  refuseKilledWrites();
  const coll = sg.db.collection(collection) as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
  const own = Object.prototype.hasOwnProperty.call(coll, 'insertOne');
  const original = coll.insertOne;
  let reached!: () => void;
  let sent!: (doc: Record<string, unknown>) => void;
  const reachedP = new Promise<void>((r) => { reached = r; });
  const sentP = new Promise<Record<string, unknown>>((r) => { sent = r; });
  coll.insertOne = async function (this: unknown, ...args: unknown[]) {
    const doc = args[0] as { workspace?: string; toBSON?: () => Record<string, unknown> };
    const plain = (typeof doc?.toBSON === 'function' ? doc.toBSON() : doc) as { workspace?: string };
    if (plain?.workspace !== workspace) return original.apply(this, args);
    if (own) coll.insertOne = original;
    else delete (coll as Record<string, unknown>).insertOne;
    const run = runScope.getStore()!;
    sent({ ...plain, [RUN_FIELD]: [run.run] });
    // The process is dead from here: the clean-up its handler would run on a failure never happens.
    // A delete is refused before it is marked on the intent or sent (a kill writes nothing after).
    run.markDeletes = () => Promise.reject(new Error('the process was killed'));
    run.deletesMarked = undefined;
    killedRuns.add(run);
    reached();
    throw new Error('the process was killed');
  };
  return {
    reached: reachedP,
    land: async () => {
      try {
        await sg.db.db!.collection(collection).insertOne(await sentP as never);
        return 'stored';
      } catch (err) {
        if ((err as { code?: number }).code !== 11000) throw err;
        return 'duplicate';
      }
    },
  };
}

/**
 * What a kill leaves once time has passed: the attempt's intent (the newest of `tool` in the
 * workspace) and Idempotency-Key past their leases, its executor gone; `lock`, if given, and every
 * lock named after the workspace (the killed attempt never released its own), past their leases too. Answers the intent's id.
 */
export async function ageDeadAttempt(sg: Pick<TestSubgraph, 'db' | 'governance'>, workspace: string, tool: string, lock?: string): Promise<string> {
  const intent = await sg.governance.intents.findOne({ workspace, tool }).sort({ started_at: -1 }).lean();
  if (!intent) throw new Error('the attempt has no intent');
  const long = new Date(Date.now() - 10 * 60_000);
  await sg.governance.intents.updateOne({ _id: intent._id }, { $set: { started_at: long, executor: 'exe_killed' } });
  await sg.governance.db.collection('idempotency').updateOne({ run: intent._id.slice(4) }, { $set: { lease_until: long } });
  if (lock) await sg.db.collection('locks').updateOne({ _id: lock } as never, { $set: { until: long } });
  // The locks the killed attempt took and never released (a kill sends no release: holdNextInsert) — every lock named after the workspace.
  for (const held of await sg.db.collection('locks').find({}, { projection: { _id: 1 } }).toArray()) {
    if (String(held._id).includes(workspace)) await sg.db.collection('locks').updateOne({ _id: held._id }, { $set: { until: long } });
  }
  return intent._id;
}

/** What {@link killedAndSettled} and {@link approvedAndKilled} drive: a subgraph started for a test. */
type LateWriteSubgraph = Pick<TestSubgraph, 'db' | 'governance' | 'call' | 'sweep'>;

/**
 * A keyed `tool` call killed inside its insert into `collection` ({@link holdNextInsert}), then —
 * once time has passed ({@link ageDeadAttempt}) and a sweep ran — settled by recovery as having
 * written nothing: its intent gone, its ledger entry `interrupted`, its key handed back. Throws when
 * any of that is not so. `beforeRecovery` runs between the kill and the aging (drafts: the rollup
 * repair meeting the attempt first). Answers the held insert, for the test to land when it says.
 */
export async function killedAndSettled(sg: LateWriteSubgraph, owner: Principal, call: { tool: string; collection: string; input: Record<string, unknown>; key: string }, beforeRecovery?: () => Promise<void>): Promise<HeldInsert> {
  const { tool, collection, input, key } = call;
  const held = holdNextInsert(sg, collection, owner.workspace);
  const dead = await sg.call(tool, input, owner, { idempotencyKey: key });
  await held.reached;
  if (dead.code !== 'outcome_unknown') throw new Error(`the killed ${tool} answered ${dead.code ?? dead.httpStatus}, not outcome_unknown`);
  await beforeRecovery?.();
  const intentId = await ageDeadAttempt(sg, owner.workspace, tool);
  await sg.sweep();
  if (await sg.governance.intents.exists({ _id: intentId })) throw new Error(`recovery left the dead ${tool}'s intent ${intentId}`);
  // Recovery's story: the call wrote nothing (its ledger entry interrupted, its key handed back).
  const told = await sg.governance.ledger.entries.find({ idempotency_key: key, tool }).lean();
  const outcomes = told.map((e) => e.outcome);
  if (outcomes.length !== 1 || outcomes[0] !== 'interrupted') throw new Error(`the dead ${tool}'s ledger says ${JSON.stringify(outcomes)}, not ["interrupted"]`);
  return held;
}

/**
 * A `tool` call held for approval by a policy of its own, approved, run by the sweep and killed
 * inside its insert into `collection`, its attempt then aged as a kill leaves it. Throws when the
 * call was not held or its approval is not `executing` at the kill. Answers the held insert and the
 * approval's id.
 */
export async function approvedAndKilled(sg: LateWriteSubgraph, owner: Principal, call: { tool: string; collection: string; input: Record<string, unknown> }): Promise<{ held: HeldInsert; approvalId: string }> {
  const { tool, collection, input } = call;
  await sg.governance.policies.create(owner.workspace, { name: `Hold ${tool}`, priority: 50, match: { tools: [tool] }, effect: 'hold' }, `pol_${owner.workspace}`);
  const asked = await sg.call(tool, input, owner);
  if (!asked.pending || !asked.approvalId) throw new Error(`${tool} was not held for approval (${asked.code ?? asked.httpStatus})`);
  await sg.governance.approvals.decide(owner.workspace, asked.approvalId, 'approved', { type: 'member', id: 'mem_other' }, null);
  const held = holdNextInsert(sg, collection, owner.workspace);
  await sg.sweep();
  await held.reached;
  const status = (await sg.governance.approvals.get(owner.workspace, asked.approvalId))?.status;
  if (status !== 'executing') throw new Error(`the approval of the killed ${tool} is ${status}, not executing`);
  await ageDeadAttempt(sg, owner.workspace, tool);
  return { held, approvalId: asked.approvalId };
}

/**
 * Lets `held` land at the moment the next sweep, having settled the dead attempt (its approval back
 * to approved), asks for the approved call to run again: between recovery and the rerun. Answers how
 * the landing went, once the sweep ran (undefined: the sweep never asked).
 */
export function landBeforeRerun(sg: Pick<TestSubgraph, 'governance'>, held: HeldInsert): () => 'stored' | 'duplicate' | undefined {
  const approvals = sg.governance.approvals;
  const approvedFor = approvals.approvedFor.bind(approvals);
  let landed: 'stored' | 'duplicate' | undefined;
  approvals.approvedFor = async (...args) => {
    approvals.approvedFor = approvedFor;
    landed = await held.land();
    return approvedFor(...args);
  };
  return () => landed;
}
export { forgetLegacyAdoption } from './operations.ts';
