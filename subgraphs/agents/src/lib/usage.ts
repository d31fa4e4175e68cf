import { modelOn } from '@cuadra/shared';
import { Schema, type Connection, type Model } from 'mongoose';
import type { AgentRunDoc, RunStep } from '../modules/agent_runs/model.ts';

/**
 * Rollups of the agents' usage, kept on write (issue 37: metrics read these, never the runs): one
 * document per workspace and day. `v` holds the day's totals; `k.<model>~<agent>` the same per model
 * and agent; `names`/`currency` what rows show; `durations` each finished run's duration (exact
 * p50/p95). Counters only change by `$inc` under a mark: a change is added with `{applied: {$ne:
 * mark}}` + `$addToSet`, so adding it twice is a no-op, and its mark is pulled once the run says it
 * is in (the pattern of the finance rollups).
 */
export interface UsageRollupDoc {
  _id: string;
  workspace: string;
  day: string;
  v: Record<string, number>;
  k: Record<string, Record<string, number>>;
  names: Record<string, string>;
  currency: Record<string, string>;
  durations: number[];
  applied: string[];
}

const rollupSchema = new Schema<UsageRollupDoc>(
  {
    _id: String, workspace: String, day: String, v: { type: Schema.Types.Mixed, default: {} }, k: { type: Schema.Types.Mixed, default: {} },
    names: { type: Schema.Types.Mixed, default: {} }, currency: { type: Schema.Types.Mixed, default: {} }, durations: { type: [Number], default: [] }, applied: { type: [String], default: [] },
  },
  { versionKey: false, minimize: false },
);

/** The usage rollups. */
export function usageRollups(db: Connection): Model<UsageRollupDoc> {
  return modelOn<UsageRollupDoc>(db, 'AgentUsageRollup', rollupSchema, 'agent_usage_rollups');
}

/** A rollup's id. */
export function usageRollupId(workspace: string, day: string): string {
  return `${workspace}|${day}`;
}

/** Makes sure the day's document exists (so the marked `$inc` below has a document to match). */
async function ensureDay(db: Connection, workspace: string, day: string): Promise<string> {
  const id = usageRollupId(workspace, day);
  await usageRollups(db).updateOne({ _id: id }, { $setOnInsert: { workspace, day, v: {}, k: {}, names: {}, currency: {}, durations: [], applied: [] } }, { upsert: true }).catch((err) => {
    if ((err as { code?: number }).code !== 11000) throw err;
  });
  return id;
}

/** Adds `inc` under `mark` once; the mark is left for {@link forgetMark}. */
async function addOnce(db: Connection, workspace: string, day: string, mark: string, update: { $inc?: Record<string, number>; $set?: Record<string, unknown>; $push?: Record<string, unknown> }): Promise<void> {
  const id = await ensureDay(db, workspace, day);
  await usageRollups(db).updateOne({ _id: id, applied: { $ne: mark } }, { ...update, $addToSet: { applied: mark } });
}

/** Pulls a mark once its change is known to be in (the run records it). */
export async function forgetMark(db: Connection, workspace: string, day: string, mark: string): Promise<void> {
  await usageRollups(db).updateOne({ _id: usageRollupId(workspace, day) }, { $pull: { applied: mark } });
}

/** Mark of a step's usage. */
export const stepMark = (run: string, n: number) => `u:${run}:${n}`;
/** Mark of a run's end. */
export const endMark = (run: string) => `f:${run}`;

/** Adds one model call's tokens and cost to its day, model and agent (once). */
export async function addStepUsage(db: Connection, run: Pick<AgentRunDoc, '_id' | 'workspace' | 'day' | 'agent_id' | 'agent_name' | 'model_id' | 'model_name' | 'currency'>, step: Pick<RunStep, 'n' | 'usage'>): Promise<void> {
  const key = `k.${run.model_id}~${run.agent_id}`;
  const u = step.usage;
  const inc: Record<string, number> = {};
  for (const [field, value] of [['input_tokens', u.input_tokens], ['output_tokens', u.output_tokens], ['cached_tokens', u.cached_tokens], ['cost_micros', u.cost_micros], ['calls', 1]] as const) {
    inc[`v.${field}`] = value;
    inc[`${key}.${field}`] = value;
  }
  await addOnce(db, run.workspace, run.day, stepMark(run._id, step.n), {
    $inc: inc, $set: { [`names.${run.model_id}`]: run.model_name, [`names.${run.agent_id}`]: run.agent_name, [`currency.${run.model_id}`]: run.currency },
  });
}

/** Counts a run that ended: by status, with its cost and its duration (once). */
export async function addRunEnd(db: Connection, run: Pick<AgentRunDoc, '_id' | 'workspace' | 'day' | 'status' | 'usage' | 'created_at' | 'finished_at'>): Promise<void> {
  const duration = Math.max(0, new Date(run.finished_at ?? Date.now()).getTime() - new Date(run.created_at).getTime());
  await addOnce(db, run.workspace, run.day, endMark(run._id), {
    $inc: { 'v.runs': 1, [`v.runs_${run.status}`]: 1, 'v.run_cost_micros': run.usage.cost_micros, [`v.cost_${run.status}`]: run.usage.cost_micros },
    $push: { durations: duration },
  });
}

/**
 * An agent's spending per workspace day, committed before each model call (the tokens and cost
 * it may use at most) and trued up after it: a budget is checked by one conditional `$inc`, so two
 * runs of one agent at once cannot both spend its last tokens. A process that dies between the
 * two leaves its reservation counted (the budget errs on the side of spending less).
 */
export interface BudgetDoc { _id: string; tokens: number; cost_micros: number }

const budgetSchema = new Schema<BudgetDoc>({ _id: String, tokens: { type: Number, default: 0 }, cost_micros: { type: Number, default: 0 } }, { versionKey: false });

/** The budget counters. */
export function budgets(db: Connection): Model<BudgetDoc> {
  return modelOn<BudgetDoc>(db, 'AgentBudget', budgetSchema, 'agent_budgets');
}

/** Reserves `tokens` and `cost` (micros) of the agent's day; false when that would pass its budget. */
export async function reserveBudget(db: Connection, id: string, tokens: number, cost: number, budget: { daily_tokens: number | null; daily_cost: number | null }): Promise<boolean> {
  await budgets(db).updateOne({ _id: id }, { $setOnInsert: { tokens: 0, cost_micros: 0 } }, { upsert: true }).catch((err) => {
    if ((err as { code?: number }).code !== 11000) throw err;
  });
  const cond: Record<string, unknown> = { _id: id };
  if (budget.daily_tokens !== null) cond.tokens = { $lte: budget.daily_tokens - tokens };
  // daily_cost is in minor units; the counters are in millionths of one.
  if (budget.daily_cost !== null) cond.cost_micros = { $lte: budget.daily_cost * 1_000_000 - cost };
  const res = await budgets(db).updateOne(cond, { $inc: { tokens, cost_micros: cost } });
  return res.modifiedCount === 1;
}

/** Trues a reservation up to what the call used (negative when it used less). */
export async function settleBudget(db: Connection, id: string, tokens: number, cost: number): Promise<void> {
  if (tokens !== 0 || cost !== 0) await budgets(db).updateOne({ _id: id }, { $inc: { tokens, cost_micros: cost } });
}

/** A workspace's calls to a model in the current minute (`<workspace>|<model>`): one document per pair, its minute moved on in place. */
interface MinuteDoc { _id: string; minute: string; calls: number }
const minuteSchema = new Schema<MinuteDoc>({ _id: String, minute: { type: String, default: '' }, calls: { type: Number, default: 0 } }, { versionKey: false });

/** The per-minute call counters. */
export function modelMinutes(db: Connection): Model<MinuteDoc> {
  return modelOn<MinuteDoc>(db, 'AgentModelMinute', minuteSchema, 'agent_model_minutes');
}

/**
 * Takes one call of the current minute for `workspace` on `model` when fewer than `limit` were
 * made; false when the minute is full. Each step is one conditional update (a new minute starts the
 * count again at one), so runs of several processes at once share the limit.
 */
export async function takeModelCall(db: Connection, workspace: string, model: string, limit: number, now = new Date()): Promise<boolean> {
  const id = `${workspace}|${model}`;
  const minute = now.toISOString().slice(0, 16);
  await modelMinutes(db).updateOne({ _id: id }, { $setOnInsert: { minute: '', calls: 0 } }, { upsert: true }).catch((err) => {
    if ((err as { code?: number }).code !== 11000) throw err;
  });
  if ((await modelMinutes(db).updateOne({ _id: id, minute, calls: { $lt: limit } }, { $inc: { calls: 1 } })).modifiedCount === 1) return true;
  return (await modelMinutes(db).updateOne({ _id: id, minute: { $ne: minute } }, { $set: { minute, calls: 1 } })).modifiedCount === 1;
}
