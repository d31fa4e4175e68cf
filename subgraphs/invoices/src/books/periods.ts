import { CuadraError } from '@cuadra/shared';
import { Schema, type Connection, type Model } from 'mongoose';

/**
 * An accounting period (a month) of a workspace. Absent = open. `closing` is the short state
 * while a close (or the reopening of a closed year) writes its own entries: then only those
 * pass the guard, so nothing slips in between the year's result being computed and the month closing.
 */
export interface PeriodDoc {
  /** `<workspace>|<YYYY-MM>`: the guard reads it by `_id` on every posting. */
  _id: string;
  workspace: string;
  month: string;
  status: 'open' | 'closing' | 'closed';
  /** How many year-end closing entries this month has had (December only); names the next one. */
  closings: number;
  /** The year-end closing entry in force (December only), else null. */
  closing_entry_id: string | null;
  closed_at: Date | null;
  closed_by: string | null;
  reopened_at: Date | null;
  /**
   * How many times the month went into `closing` (a close or a reopen began): names the close or
   * reopen in flight for the durable-operation runner (modules/periods/ops.ts). Absent before it existed.
   */
  turn?: number;
  updated_at: Date;
}

const periodSchema = new Schema<PeriodDoc>(
  {
    _id: { type: String, required: true },
    workspace: { type: String, required: true },
    month: { type: String, required: true },
    status: { type: String, required: true },
    closings: { type: Number, default: 0 },
    closing_entry_id: { type: String, default: null },
    closed_at: { type: Date, default: null },
    closed_by: { type: String, default: null },
    reopened_at: { type: Date, default: null },
    turn: { type: Number },
    updated_at: { type: Date, required: true },
  },
  { versionKey: false },
);

/** The periods collection. */
export function periods(db: Connection): Model<PeriodDoc> {
  return (db.models.Period as Model<PeriodDoc> | undefined) ?? db.model<PeriodDoc>('Period', periodSchema, 'periods');
}

/** The months (`YYYY-MM`) from `from` on that are closed or being closed (other subgraphs read it through the graph: `closedPeriods`). */
export async function closedMonthsFrom(db: Connection, workspace: string, from: string): Promise<string[]> {
  if (!/^\d{4}-\d{2}$/.test(from)) throw new CuadraError('invalid_input', 'from is a month YYYY-MM.', { field: '/from' });
  const found = await periods(db).find({ workspace, month: { $gte: from }, status: { $in: ['closed', 'closing'] } }, { month: 1 }).limit(1_200).lean();
  return found.map((p) => p.month).sort();
}

/** Id of a workspace's month. */
export function periodId(workspace: string, month: string): string {
  return `${workspace}|${month}`;
}

/**
 * The one rule every posting obeys: nothing is posted into a closed month. postEntry
 * calls it for every new entry, so every posting path (invoices, credit notes, payments, bills,
 * bill payments, manual entries, and any module added later) inherits it; the posting tools also
 * call it before their first side effect, so a refusal leaves nothing half done. `closing`
 * entries (the year-end close and its reversal) pass while their own period is `closing`.
 */
export async function assertPeriodOpen(db: Connection, workspace: string, date: string, options: { closingEntry?: boolean } = {}): Promise<void> {
  const month = date.slice(0, 7);
  const p = await periods(db).findById(periodId(workspace, month), { status: 1 }).lean();
  if (!p || p.status === 'open') return;
  if (p.status === 'closing' && options.closingEntry) return;
  throw new CuadraError('conflict', p.status === 'closed'
    ? `The accounting period ${month} is closed: nothing can be posted dated ${date}. Reopen it with periods.reopen, or date the posting in an open month.`
    : `The accounting period ${month} is being closed right now: nothing can be posted dated ${date}.`);
}
