import { AsyncLocalStorage } from 'node:async_hooks';
import type { Connection } from 'mongoose';
import { REPAIR_AFTER_MS } from './derived.ts';
import { declareDerivedCollection, runScope } from './governance/runs.ts';
import type { MaintenanceHook } from './module.ts';

/**
 * The durable-operation runner: one way for a write that spans several documents (a payment
 * applied to invoices, journalled and counted; a bank statement's transactions; a bill's credit
 * note) to survive the death of its process, without transactions (INFRA.md: the store has none).
 *
 * An operation is a *record* (the payment, the import) plus an ordered list of *steps*, each
 * idempotent: run twice, it changes nothing the second time (a conditional update, an id chosen
 * up front, a settlement that names its payment). The runner
 * 1. stores a marker in the one `operations` collection ({@link beginOperation}) before the record
 *    is written, naming the operation's kind, its record and the call (intent) that started it;
 * 2. runs the steps in order ({@link runOperation}) and marks the marker `done`;
 * 3. leaves a marker still `running` after {@link REPAIR_AFTER_MS} (the one lease length of every
 *    repair) to the owner's background sweep ({@link operationsMaintenance}, a module manifest's
 *    `maintenance` hook), which takes it over (a conditional update of its time: one taker) and runs
 *    every step again from the first — the finished ones change nothing — so the operation ends
 *    whole, or, when a step refuses for good ({@link OperationKind.abandons}), ends undone with the
 *    record's own clean-up done by that step.
 *
 * When the owner settles a dead call — or the stale-operation pass meets its marker first — and finds
 * its operation's record absent, the marker is dropped, or — for a kind that can {@link
 * OperationKind.withdraw}, and a marker naming its call — kept `wrote_nothing` for {@link WATCH_MS} so
 * a record the dead process had sent, landing late, is removed ({@link withdrawLateRecords}).
 *
 * A `done` marker is kept for {@link DONE_KEPT_MS}: an interrupted call (its answer lost with its
 * process) is answered from it — the owner finishes the operation its run started and answers the
 * record (`#answerFromRecord`, owner.ts) instead of `outcome_unknown`. The markers are the runner's
 * bookkeeping, not an action's effect: the collection is derived (no run stamps; see runs.ts).
 *
 * Reads never write: nothing here runs in a read; a read that finds a record mid-operation answers
 * it as stored (a pending payment is shown pending).
 */
export const OPERATIONS_COLLECTION = 'operations';
declareDerivedCollection(OPERATIONS_COLLECTION);

/** How long a finished operation's marker is kept for answering its interrupted call (an action's lease is a minute). */
export const DONE_KEPT_MS = 60 * 60_000;

/**
 * How long a `wrote_nothing` marker is watched for its record landing late (a dead process's last
 * write held in the store's receive buffer lands within seconds; an hour, as a done marker is kept).
 */
export const WATCH_MS = DONE_KEPT_MS;

/** Markers read per pass of the sweep: what is in flight or abandoned, a handful when all is well. */
const MARKERS_PER_PASS = 200;

/** One operation in flight or recently done. */
export interface OperationDoc {
  /** `<kind>:<record id>`: one operation per record and kind. */
  _id: string;
  workspace: string;
  kind: string;
  /** The id of the operation's record (the payment, the import…). */
  record: string;
  /** The intent of the call that started it (null outside a tool call). */
  run: string | null;
  /**
   * `wrote_nothing`: recovery settled the call as having written nothing here (its record not
   * found); kept {@link WATCH_MS} for a record its dead attempt sent that the store applies late
   * (see {@link OperationKind.withdraw}). Not in flight: a period close does not wait on it.
   */
  status: 'running' | 'done' | 'wrote_nothing';
  /** When a runner last took it (started, or took it over): the lease. */
  at: Date;
}

/** What an operation's steps run with. */
export interface OperationContext { db: Connection; workspace: string; now: Date }

/** A kind of durable operation, declared once by the module that owns its record. */
export interface OperationKind<T> {
  /** Unique in the service (`payment`, `bill_payment`…). */
  kind: string;
  /** Reads the record; null when it was never written (the call died before) — the marker goes. */
  load(ctx: OperationContext, id: string): Promise<T | null>;
  /**
   * The ordered steps, each idempotent; each gets the record as the step before left it. A step
   * that finds the operation can never finish undoes what it began and calls {@link dropOperation}.
   */
  steps: readonly ((ctx: OperationContext, record: T) => Promise<T>)[];
  /**
   * Marker stores this kind's operations were kept in before the runner (stored data may still
   * hold some): adopted — moved into the runner's store — wherever the runner looks for stale work.
   */
  legacyMarkers?: readonly LegacyMarkers[];
  /**
   * Removes a record that landed after recovery settled its call as having written nothing (a dead
   * attempt's insert the store applied late: the marker is `wrote_nothing`), so the store keeps the
   * story recovery told — the call's key handed back, its ledger entry `interrupted`. Runs under
   * whatever serializes the record's writers (the kind's lock), checks the marker is still
   * `wrote_nothing` (a retry takes it over: {@link beginOperation}) and the record still as that
   * attempt wrote it (stamped by its run alone, no step applied). Answers `withdrawn` (record and
   * marker removed), `taken` (a retry took the marker: nothing to do) or `kept` (the record is not
   * as the dead attempt left it: the runner finishes it instead). A kind without it keeps the old
   * way: a marker whose record is not found at recovery is dropped.
   */
  withdraw?(ctx: OperationContext, record: T, marker: OperationDoc): Promise<'withdrawn' | 'taken' | 'kept'>;
  /**
   * For a kind whose record must never land after its call was settled (a rental's id, whose hold
   * the sweep releases): when the runner does not find the record, it withdraws the record's id for
   * good instead of watching for it — one write that a late insert then collides with (a tombstone
   * under the id). The write is the decision: true when the id is withdrawn (now or before: the
   * marker goes), false when the record stands under it after all (landed just now: the operation is
   * finished with it and the call answered from it).
   */
  withdrawId?(ctx: OperationContext, id: string): Promise<boolean>;
}

/** A marker of an older store, as stored (its fields vary by store). */
export interface LegacyMarker { _id: string; workspace: string; at?: Date; doc?: string; [field: string]: unknown }

/** An older marker store: its collection, which of its markers are this kind's, and the record each names. */
export interface LegacyMarkers {
  collection: string;
  filter?: Record<string, unknown>;
  record(marker: LegacyMarker): string;
  /** When the old lease was last taken (default: the marker's `at`). */
  leasedAt?(marker: LegacyMarker): Date;
  /**
   * For a store that kept its lease on the record itself (fields of the document, not a document of
   * its own): clears those fields, conditionally on the lease read, instead of deleting the document.
   */
  release?(db: Connection, marker: LegacyMarker): Promise<void>;
  /**
   * The store is also what this version writes — a record whose state is its marker (an asset
   * `recording`): a late insert after recovery dropped its marker matches it, so the store is read
   * every pass and never marked adopted (the assets' `intentsKeptOnAssets`). Without it an asset
   * whose insert landed after recovery stayed `recording` for good, no acquisition entry
   * (assets-late-write.test.ts, the fresh-clone run of the twelfth session).
   */
  everyPass?: boolean;
}

const kinds = new Map<string, OperationKind<any>>();

/** Declares a kind of operation (once per process: a second declaration of a kind replaces the first). */
export function defineOperation<T>(kind: OperationKind<T>): OperationKind<T> {
  kinds.set(kind.kind, kind);
  return kind;
}

/**
 * Set while an operation's steps run. An operation begun by a step (a payment run's confirm paying
 * each bill through the bill payment operation) is part of the one running: its marker names no
 * call, so the call that started the outer one is answered from the outer record alone.
 */
const enclosing = new AsyncLocalStorage<true>();

function markers(db: Connection) {
  return db.collection<OperationDoc>(OPERATIONS_COLLECTION);
}

function markerId(kind: Pick<OperationKind<unknown>, 'kind'>, id: string): string {
  return `${kind.kind}:${id}`;
}

/**
 * Stores the marker of an operation about to write its record (before the record: a process
 * dying right after leaves a marker whose record the sweep does not find, and drops). A marker
 * already there (the same operation started again by a retry) is kept. Begun inside another
 * operation's step, it names no call: it is part of that operation (see `enclosing`).
 */
export async function beginOperation(ctx: OperationContext, kind: Pick<OperationKind<unknown>, 'kind'>, id: string): Promise<void> {
  const run = enclosing.getStore() ? null : runScope.getStore()?.run ?? null;
  try {
    await markers(ctx.db).insertOne({ _id: markerId(kind, id), workspace: ctx.workspace, kind: kind.kind, record: id, run, status: 'running', at: ctx.now });
  } catch (err) {
    if ((err as { code?: number }).code !== 11000) throw err;
    // A retry of a call recovery settled as having written nothing: its operation again, in flight.
    await markers(ctx.db).updateOne({ _id: markerId(kind, id), status: 'wrote_nothing' }, { $set: { run, status: 'running', at: ctx.now } });
  }
}

/**
 * Runs an operation's steps in order on its record and marks it done. A step that throws leaves
 * the marker for the sweep (the steps run again), unless it dropped the operation.
 */
export async function runOperation<T>(ctx: OperationContext, kind: OperationKind<T>, record: T, id: string): Promise<T> {
  let current = record;
  for (const step of kind.steps) current = await enclosing.run(true, () => step(ctx, current));
  await markers(ctx.db).updateOne({ _id: markerId(kind, id) }, { $set: { status: 'done', at: new Date() } });
  return current;
}

/**
 * Takes over an operation left running past the lease by a process that died (a conditional update
 * of the marker's time: one taker), for a call that finds its record held and finishes it itself
 * rather than wait for the sweep. False when it is within its lease, done or gone.
 */
export async function takeOverOperation(ctx: OperationContext, kind: Pick<OperationKind<unknown>, 'kind'>, id: string): Promise<boolean> {
  const taken = await markers(ctx.db).updateOne(
    { _id: markerId(kind, id), status: 'running', at: { $lt: new Date(ctx.now.getTime() - REPAIR_AFTER_MS) } },
    { $set: { at: ctx.now } },
  );
  return taken.modifiedCount === 1;
}

/** Ends an operation that will never finish (its step undid the record): the sweep stops retrying it. */
export async function dropOperation(ctx: OperationContext, kind: OperationKind<any>, id: string): Promise<void> {
  await markers(ctx.db).deleteOne({ _id: markerId(kind, id) });
}

/**
 * Whether operations of these kinds are in flight in a workspace (running, and within their lease):
 * what a period close waits for rather than cut a posting in two.
 */
export async function operationsInFlight(ctx: OperationContext, ofKinds: readonly OperationKind<any>[]): Promise<boolean> {
  const since = new Date(ctx.now.getTime() - REPAIR_AFTER_MS);
  return (await markers(ctx.db).countDocuments({ workspace: ctx.workspace, kind: { $in: ofKinds.map((k) => k.kind) }, status: 'running', at: { $gte: since } }, { limit: 1 })) > 0;
}

/**
 * Finishes the operations of these kinds left running past the lease (in one workspace, or in
 * all), each taken over first (a conditional update of the marker's time: one taker). A step that
 * still refuses (a conflict that may clear) leaves the marker for the next pass.
 * @returns how many it finished
 */
export async function finishStaleOperations(db: Connection, ofKinds: readonly OperationKind<any>[], now: Date, workspace?: string): Promise<number> {
  for (const kind of ofKinds) {
    for (const legacy of kind.legacyMarkers ?? []) await adoptLegacyStore(db, legacy, kind.kind, workspace);
  }
  const filter = { ...(workspace ? { workspace } : {}), kind: { $in: ofKinds.map((k) => k.kind) }, status: 'running' as const, at: { $lt: new Date(now.getTime() - REPAIR_AFTER_MS) } };
  const stale = await markers(db).find(filter).limit(MARKERS_PER_PASS).toArray();
  let finished = 0;
  for (const m of stale) {
    const taken = await markers(db).updateOne({ _id: m._id, status: 'running', at: m.at }, { $set: { at: now } });
    if (taken.modifiedCount !== 1) continue;
    try {
      if (await finishOperation(db, { ...m, at: now }, now) !== null) finished++;
    } catch {
      // Refused for now (a record held elsewhere) or a lost connection: the marker stays, a later pass tries again.
    }
  }
  return finished;
}

/**
 * Finishes an operation from its marker: its record read again and every step run (the ones done
 * change nothing). A marker whose record is not in the store, or of a kind this process does not
 * know, is answered null (the first is dropped, watched for its record landing late, or — a kind
 * that withdraws ids ({@link OperationKind.withdrawId}) — dropped once its id is withdrawn).
 */
export async function finishOperation(db: Connection, marker: OperationDoc, now = new Date()): Promise<unknown> {
  const kind = kinds.get(marker.kind);
  if (!kind) return null;
  const ctx = { db, workspace: marker.workspace, now };
  let record = await kind.load(ctx, marker.record);
  if (record === null && kind.withdrawId) {
    // Withdrawn, the record can never land: nothing to watch, the marker goes. Refused, the record
    // stands under its id (it landed just now): finished below like any other.
    if (await kind.withdrawId(ctx, marker.record)) {
      await markers(db).deleteOne({ _id: marker._id });
      return null;
    }
    record = await kind.load(ctx, marker.record);
  }
  if (record === null) {
    // Its call died before its record reached the store — or the record is still on its way (a dead
    // process's last insert the store applies late). Two passes of the sweep meet such a marker:
    // recovery settling the call (operationsOfRun) and, once past the lease, the stale-operation pass
    // (finishStaleOperations). Recovery runs first in a sweep, but it leaves alone a call whose
    // process still looks alive (a fresh heartbeat, an owner just restarted), so the stale pass can
    // meet the marker first; either way it is kept watched for the late record (see
    // OperationKind.withdraw), not dropped. A marker naming no call (legacy, or begun inside another
    // operation, whose ids are chosen up front) and a kind that cannot withdraw keep the old drop.
    if (kind.withdraw && marker.run) await markers(db).updateOne({ _id: marker._id, status: marker.status }, { $set: { status: 'wrote_nothing', at: now } });
    else await markers(db).deleteOne({ _id: marker._id });
    return null;
  }
  return runOperation(ctx, kind, record, marker.record);
}

/**
 * The operations a call (its intent) started, finished first when still running: what its
 * interrupted answer is read back from. Each is `{kind, record}`; one whose record was never
 * written is dropped and not listed (the call did nothing there).
 */
export async function operationsOfRun(db: Connection, run: string, now = new Date()): Promise<{ kind: string; record: string }[]> {
  const found = await markers(db).find({ run }).limit(2).toArray();
  const done: { kind: string; record: string }[] = [];
  for (const m of found) {
    // An operation whose record was never written did nothing (its marker is dropped, or watched
    // for a late landing: `wrote_nothing`): not listed.
    if (m.status !== 'done' && (await finishOperation(db, m, now)) === null) continue;
    done.push({ kind: m.kind, record: m.record });
  }
  return done;
}

/**
 * The sweep's share of the runner (a module manifest's `maintenance` hook): operations of the
 * given kinds left running past the lease are finished ({@link finishStaleOperations}); done
 * markers past {@link DONE_KEPT_MS} are removed.
 * @returns how many operations it finished
 */
export function operationsMaintenance(ofKinds: readonly OperationKind<any>[]): MaintenanceHook {
  return async ({ db, now }) => {
    await markers(db).deleteMany({ kind: { $in: ofKinds.map((k) => k.kind) }, status: 'done', at: { $lt: new Date(now.getTime() - DONE_KEPT_MS) } });
    const withdrawn = await withdrawLateRecords(db, ofKinds, now);
    return withdrawn + await finishStaleOperations(db, ofKinds, now);
  };
}

/**
 * Revisits the `wrote_nothing` markers of these kinds: a record that landed since is withdrawn
 * ({@link OperationKind.withdraw}), or — not as its dead attempt left it — handed to the runner to
 * finish; a marker whose record has not landed within {@link WATCH_MS} is dropped.
 * @returns how many records it withdrew
 */
export async function withdrawLateRecords(db: Connection, ofKinds: readonly OperationKind<any>[], now: Date): Promise<number> {
  const watched = await markers(db).find({ kind: { $in: ofKinds.map((k) => k.kind) }, status: 'wrote_nothing' }).limit(MARKERS_PER_PASS).toArray();
  let withdrawn = 0;
  for (const m of watched) {
    const kind = kinds.get(m.kind);
    if (!kind?.withdraw) continue;
    const ctx = { db, workspace: m.workspace, now };
    try {
      const record = await kind.load(ctx, m.record);
      if (record === null) {
        if (m.at.getTime() < now.getTime() - WATCH_MS) await markers(db).deleteOne({ _id: m._id, status: 'wrote_nothing', at: m.at });
        continue;
      }
      const outcome = await kind.withdraw(ctx, record, m);
      if (outcome === 'withdrawn') withdrawn++;
      // Written on by something else since: made whole by the runner (a stale running marker).
      else if (outcome === 'kept') await markers(db).updateOne({ _id: m._id, status: 'wrote_nothing' }, { $set: { status: 'running', at: new Date(0) } });
    } catch {
      // Refused for now (its lock held) or a lost connection: the marker stays, a later pass tries again.
    }
  }
  return withdrawn;
}

/** The `migrations` collection: one document per store whose older markers were all adopted. */
const MIGRATIONS = 'migrations';

/** The legacy stores this process knows are adopted (per connection): after that, a pass reads nothing for them. */
const adoptedStores = new WeakMap<Connection, Set<string>>();

/** The `migrations` id of one older store of one kind (its filter is part of what the store is). */
function legacyStoreId(legacy: LegacyMarkers, kind: string): string {
  return `legacy-markers:${kind}:${legacy.collection}:${JSON.stringify(legacy.filter ?? {})}`;
}

/**
 * Moves every marker of an older store into the runner's, once per store (issue 33): only an older
 * version wrote them, so once they are all moved — `migrations` says so — no pass reads the store
 * again. Before, every pass of the sweep (twice a second) queried each older store by a filter the
 * store answers by walking the whole collection (`bank_transactions
 * {status, lock_at, …}`, `sales_documents {converted_to, converted_on}`…; docs/measurements.md,
 * "Scans of background jobs"). A store this version writes too is read every pass instead
 * ({@link LegacyMarkers.everyPass}: the assets). Paged by `_id`, conditional and resumable: each marker is copied — an existing
 * copy kept — before it is released or removed, and a pass that stops half way leaves no mark, so
 * the next one starts again (what it moved is found again, and copied no second time).
 * @returns how many it moved
 */
async function adoptLegacyStore(db: Connection, legacy: LegacyMarkers, kind: string, workspace?: string): Promise<number> {
  if (legacy.everyPass) return adoptLegacyPage(db, legacy, kind, workspace);
  const id = legacyStoreId(legacy, kind);
  let adopted = adoptedStores.get(db);
  if (!adopted) adoptedStores.set(db, (adopted = new Set()));
  if (adopted.has(id)) return 0;
  const migrations = db.collection<{ _id: string; at: Date }>(MIGRATIONS);
  if (await migrations.findOne({ _id: id })) {
    adopted.add(id);
    return 0;
  }
  let moved = 0;
  let after: string | undefined;
  for (;;) {
    const filter = { ...legacy.filter, ...(after === undefined ? {} : { _id: { $gt: after } }) };
    const page = await db.collection<LegacyMarker>(legacy.collection).find(filter as never).sort({ _id: 1 }).limit(MARKERS_PER_PASS).toArray();
    for (const old of page) {
      await adoptLegacyMarker(db, legacy, kind, old);
      moved++;
    }
    if (page.length < MARKERS_PER_PASS) break;
    after = page[page.length - 1]._id;
  }
  await migrations.updateOne({ _id: id }, { $set: { at: new Date() } }, { upsert: true });
  adopted.add(id);
  return moved;
}

/** One pass over a store read every pass ({@link LegacyMarkers.everyPass}): at most a page of its markers adopted. */
async function adoptLegacyPage(db: Connection, legacy: LegacyMarkers, kind: string, workspace?: string): Promise<number> {
  const filter = { ...legacy.filter, ...(workspace ? { workspace } : {}) };
  const page = await db.collection<LegacyMarker>(legacy.collection).find(filter as never).limit(MARKERS_PER_PASS).toArray();
  for (const old of page) await adoptLegacyMarker(db, legacy, kind, old);
  return page.length;
}

/** One older marker copied into the runner's store (an existing copy kept), then released or removed. */
async function adoptLegacyMarker(db: Connection, legacy: LegacyMarkers, kind: string, old: LegacyMarker): Promise<void> {
  const record = legacy.record(old);
  try {
    await markers(db).insertOne({ _id: `${kind}:${record}`, workspace: old.workspace, kind, record, run: null, status: 'running', at: legacy.leasedAt?.(old) ?? old.at! });
  } catch (err) {
    if ((err as { code?: number }).code !== 11000) throw err;
  }
  if (legacy.release) await legacy.release(db, old);
  else await db.collection(legacy.collection).deleteOne({ _id: old._id } as never);
}

/**
 * Forgets that the older stores were adopted (tests only): as a store holding an older version's
 * markers looks at the upgrade — the next pass of the runner moves them again.
 */
export async function forgetLegacyAdoption(db: Connection): Promise<void> {
  adoptedStores.delete(db);
  await db.collection<{ _id: string }>(MIGRATIONS).deleteMany({ _id: /^legacy-markers:/ } as never);
}
