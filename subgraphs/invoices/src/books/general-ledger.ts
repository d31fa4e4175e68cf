import { addDays, buckets, previousWindow, queryWindow, type MetricQuery } from '@cuadra/shared';
import type { Connection } from 'mongoose';
import { daysOf, endOfMonth, monthsBetween, nextMonth, splitByMonths } from './calendar.ts';
import { ALL_TIME, Grain, LedgerCounter, pendingChanges, rollupId, rollups, type RollupDoc } from './rollup-store.ts';
import { applyRollupIntent, REPAIR_AFTER_MS, type RollupIntent } from './rollup-intents.ts';
import { journalEntries, LEDGER_USAGE, ledgerCurrency } from './journal.ts';

/**
 * Reads of the general ledger from the per-account rollups postEntry keeps (journal.ts
 * ledgerDeltas): `d<code>`/`c<code>` per day, month and all time, by `_id` only (INFRA.md: the
 * MongoDB-protocol server scans ranges). A balance at a date costs the all-time document, the
 * months after it up to {@link FUTURE_MONTHS} past today, and the days after it in its month:
 * at most ~70 documents whatever the length of the history. Entries dated later than that
 * horizon would be counted in every earlier position: postings are dated near today (the
 * documents' own dates), and manual entries are refused past it (journal.create).
 */
export const FUTURE_MONTHS = 36;

/** Per-account debit and credit sums, by {@link LedgerCounter} key. */
export type LedgerSums = Record<string, number>;

async function byIds(db: Connection, ids: string[]): Promise<RollupDoc[]> {
  const out: RollupDoc[] = [];
  for (let i = 0; i < ids.length; i += 400) out.push(...await rollups(db).find({ _id: { $in: ids.slice(i, i + 400) } }).lean<RollupDoc[]>());
  return out;
}

function addInto(into: LedgerSums, v: Record<string, number> | undefined, sign = 1): void {
  for (const [k, n] of Object.entries(v ?? {})) into[k] = (into[k] ?? 0) + sign * n;
}

/** The last month a position read subtracts (today's month + FUTURE_MONTHS, or later for a later date). */
export function ledgerHorizon(date: string, today: string): string {
  let horizon = (date > today ? date : today).slice(0, 7);
  for (let i = 0; i < FUTURE_MONTHS; i++) horizon = nextMonth(horizon);
  return horizon;
}

/** Sums of every account's counters over all days up to and including `date`. */
export async function ledgerAsOf(db: Connection, workspace: string, currency: string, date: string, today: string): Promise<LedgerSums> {
  const cur = ledgerCurrency(currency);
  const later = [
    ...monthsBetween(nextMonth(date.slice(0, 7)), ledgerHorizon(date, today)).map((m) => rollupId(workspace, cur, Grain.Month, m)),
    ...(date < endOfMonth(date) ? daysOf(addDays(date, 1), endOfMonth(date)).map((d) => rollupId(workspace, cur, Grain.Day, d)) : []),
  ];
  const [all] = await byIds(db, [rollupId(workspace, cur, Grain.AllTime, ALL_TIME)]);
  const out: LedgerSums = {};
  addInto(out, all?.v);
  for (const d of await byIds(db, later)) addInto(out, d.v, -1);
  return out;
}

/** Sums of every account's counters over each day range (whole months from monthly rollups, edges from daily ones). */
export async function ledgerBetween(db: Connection, workspace: string, currency: string, ranges: readonly { from: string; to: string }[]): Promise<LedgerSums[]> {
  const cur = ledgerCurrency(currency);
  const plans = ranges.map((r) => {
    const split = splitByMonths(r.from, r.to);
    return [
      ...split.days.flatMap((d) => daysOf(d.from, d.to).map((day) => rollupId(workspace, cur, Grain.Day, day))),
      ...(split.months ? monthsBetween(split.months.from, split.months.to).map((m) => rollupId(workspace, cur, Grain.Month, m)) : []),
    ];
  });
  const docs = new Map((await byIds(db, [...new Set(plans.flat())])).map((d) => [d._id, d]));
  return plans.map((ids) => {
    const out: LedgerSums = {};
    for (const id of ids) addInto(out, docs.get(id)?.v);
    return out;
  });
}

/** How many journal lines ever named `code` (any currency). */
export async function accountUsage(db: Connection, workspace: string, code: string): Promise<number> {
  const all = await rollups(db).findById(rollupId(workspace, LEDGER_USAGE, Grain.AllTime, ALL_TIME)).lean<RollupDoc>();
  return all?.v?.[`n${code}`] ?? 0;
}

/** Codes that ever had a journal line, with their line counts (any currency). */
export async function usedAccounts(db: Connection, workspace: string): Promise<Map<string, number>> {
  const all = await rollups(db).findById(rollupId(workspace, LEDGER_USAGE, Grain.AllTime, ALL_TIME)).lean<RollupDoc>();
  return new Map(Object.entries(all?.v ?? {}).filter(([k, n]) => k.startsWith('n') && n > 0).map(([k, n]) => [k.slice(1), n]));
}

/**
 * Applies every ledger rollup intent still in flight, whatever its age, so a close computes the
 * year's result from every entry written before it (applying an intent twice is a no-op). A
 * marker whose entry is not written yet belongs to a posting that passed the period guard just
 * before the close began: it is waited for briefly (its write follows within milliseconds).
 */
export async function settleLedger(db: Connection, workspace: string, now: Date): Promise<void> {
  const model = journalEntries(db);
  for (let round = 0; round < 40; round++) {
    const markers = await pendingChanges(db).find({ workspace, kind: 'intent', collection: model.collection.collectionName }).limit(200).lean();
    let waiting = false;
    for (const m of markers) {
      const doc = await model.findById(m.doc, { pending_rollups: 1 }).lean<{ pending_rollups?: RollupIntent[] }>();
      const intent = doc?.pending_rollups?.find((i) => i.id === m._id);
      if (intent) await applyRollupIntent(db, model, m.doc, workspace, intent);
      else if (doc || now.getTime() - new Date(m.at).getTime() > REPAIR_AFTER_MS) await pendingChanges(db).deleteOne({ _id: m._id });
      else waiting = true;
    }
    if (!waiting) return;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** An account's balance on its normal side, from sums. */
export function signedBalance(sums: LedgerSums, code: string, side: 'debit' | 'credit'): number {
  const dr = sums[LedgerCounter.debit(code)] ?? 0;
  const cr = sums[LedgerCounter.credit(code)] ?? 0;
  return side === 'debit' ? dr - cr : cr - dr;
}

/** The codes with any counter in the sums. */
export function codesIn(sums: LedgerSums): string[] {
  const codes = new Set<string>();
  for (const k of Object.keys(sums)) {
    const code = LedgerCounter.accountOf(k);
    if (code !== null) codes.add(code);
  }
  return [...codes].sort();
}

/**
 * The sums a metric over a span reads, in this order: its whole window, each of its buckets, and
 * (with `compare`) the previous window and its buckets — one {@link ledgerBetween} for all.
 */
export async function windowLedgerSums(db: Connection, workspace: string, currency: string, q: MetricQuery, today: string) {
  const w = queryWindow(q, today);
  const bs = buckets(w, q.interval ?? 'day');
  const pw = q.compare ? previousWindow(w, q.compare) : null;
  const pbs = pw ? buckets(pw, q.interval ?? 'day') : [];
  const ranges = [w, ...bs.map((b) => ({ from: b.period, to: b.period_end })), ...(pw ? [pw, ...pbs.map((b) => ({ from: b.period, to: b.period_end }))] : [])];
  return { w, bs, pw, pbs, sums: await ledgerBetween(db, workspace, currency, ranges) };
}
