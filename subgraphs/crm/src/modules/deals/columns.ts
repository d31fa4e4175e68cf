import { localDate, type DerivedChange } from '@cuadra/shared';
import type { Connection } from 'mongoose';

/**
 * The board's columns, kept on write (never counted per read; CONTRACT §9): one document per
 * stage, `_id` `<workspace>|<stage id>`, holding how many deals are in it, their amount, and its
 * cards `{k: order key, i: deal id}` kept sorted by key then id by the store itself (`$push` with
 * `$sort`), so concurrent moves leave one order whatever their interleaving. A board reads the
 * first `limit` cards of each column with a `$slice` projection: its cost follows the limit, not
 * the column's size.
 */
export const COLUMNS = 'crm_columns';

/** Metric counters by day and month (`<workspace>|<currency>|d|<date>`, `…|m|<YYYY-MM>`), kept on write. */
export const ROLLUPS = 'crm_rollups';

export interface ColumnDoc {
  _id: string;
  workspace: string;
  pipeline_id: string;
  stage_id: string;
  count: number;
  amount: number;
  cards: { k: string; i: string }[];
}

export interface RollupDoc {
  _id: string;
  v?: Record<string, number>;
  /** Per stage left: `x.<stage>.n` exits and `x.<stage>.ms` time spent before them. */
  x?: Record<string, { n?: number; ms?: number }>;
}

export function columnId(workspace: string, stageId: string): string {
  return `${workspace}|${stageId}`;
}

export function rollupId(workspace: string, currency: string, grain: 'd' | 'm', period: string): string {
  return `${workspace}|${currency}|${grain}|${period}`;
}

/** Where a deal sits, as far as columns are concerned. */
export interface Placement {
  pipeline_id: string;
  stage_id: string;
  order_key: string;
  amount: number;
}

function identity(workspace: string, p: Placement): [string, unknown][] {
  return [['workspace', workspace], ['pipeline_id', p.pipeline_id], ['stage_id', p.stage_id]];
}

/** The column changes of a deal going from `before` to `after` (either absent: created, or never). */
export function columnChanges(workspace: string, dealId: string, before: Placement | null, after: Placement | null): DerivedChange[] {
  if (before && after && before.stage_id === after.stage_id && before.order_key === after.order_key && before.amount === after.amount) return [];
  const out: DerivedChange[] = [];
  // Both carry the column's identity: were a change ever to create its column, the column is still found (by workspace) and checked.
  if (before) out.push({ coll: COLUMNS, id: columnId(workspace, before.stage_id), pull: [['cards', { i: dealId }]], inc: [['count', -1], ['amount', -before.amount]], init: identity(workspace, before) });
  if (after) {
    out.push({
      coll: COLUMNS, id: columnId(workspace, after.stage_id), push: [['cards', { k: after.order_key, i: dealId }, { k: 1, i: 1 }]], inc: [['count', 1], ['amount', after.amount]],
      init: identity(workspace, after),
    });
  }
  return out;
}

/** The counters of a day and its month (and all time) for one event. */
function atDay(workspace: string, currency: string, day: string, inc: [string, number][]): DerivedChange[] {
  return [
    { coll: ROLLUPS, id: rollupId(workspace, currency, 'd', day), inc },
    { coll: ROLLUPS, id: rollupId(workspace, currency, 'm', day.slice(0, 7)), inc },
  ];
}

/**
 * A deal closing won or lost (`sign` 1) on `closedAt`, or its close taken back by a reopen
 * (`sign` −1, on the day it had closed: a reopened deal no longer counts as won or lost at all).
 */
export function closeChanges(workspace: string, currency: string, outcome: 'won' | 'lost', amount: number, createdAt: Date, closedAt: Date, sign: 1 | -1): DerivedChange[] {
  const ms = closedAt.getTime() - new Date(createdAt).getTime();
  return atDay(workspace, currency, localDate(closedAt), [[`v.${outcome}_n`, sign], [`v.${outcome}_amt`, sign * amount], ['v.closed_n', sign], ['v.close_ms', sign * ms]]);
}

/** A deal leaving a stage on `at` after `ms` in it: the stage's average time counts it. */
export function stageExitChanges(workspace: string, currency: string, stageId: string, ms: number, at: Date): DerivedChange[] {
  return atDay(workspace, currency, localDate(at), [[`x.${stageId}.n`, 1], [`x.${stageId}.ms`, Math.max(0, ms)]]);
}

/** The columns of some stages, with at most `limit` cards each (the first ones in order). */
export async function readColumns(db: Connection, workspace: string, stageIds: readonly string[], limit: number): Promise<Map<string, ColumnDoc>> {
  const ids = stageIds.map((s) => columnId(workspace, s));
  const docs = await db.collection<ColumnDoc>(COLUMNS).find({ _id: { $in: ids } }, { projection: { workspace: 1, pipeline_id: 1, stage_id: 1, count: 1, amount: 1, cards: { $slice: limit } } }).toArray();
  return new Map(docs.map((d) => [d.stage_id, d]));
}

/** Every card of one column, in order (a move looks up the neighbours of where it drops). */
export async function columnCards(db: Connection, workspace: string, stageId: string, first?: number): Promise<{ k: string; i: string }[]> {
  const projection = first ? { cards: { $slice: first } } : { cards: 1 };
  const doc = await db.collection<ColumnDoc>(COLUMNS).findOne({ _id: columnId(workspace, stageId) }, { projection });
  return doc?.cards ?? [];
}
