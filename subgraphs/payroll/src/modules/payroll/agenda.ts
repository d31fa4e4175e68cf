import { listNewestFirst, localDate, type AgendaEntry, type LaneReader } from '@cuadra/shared';
import { employees } from '../employees/model.ts';
import { payrollRuns, periodOf, RUN_FREQUENCIES, type RunDoc } from './runs.ts';

type Frequency = (typeof RUN_FREQUENCIES)[number];

const MONTHS = ['enero', 'febrero', 'marzo', 'abril', 'mayo', 'junio', 'julio', 'agosto', 'septiembre', 'octubre', 'noviembre', 'diciembre'];

/** How far before the window an unpaid payroll still shows (with `overdue`): one month and a half. */
export const OVERDUE_DAYS = 45;

function addDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
}

function monthsBetween(from: string, to: string): string[] {
  const out: string[] = [];
  let [y, m] = from.slice(0, 7).split('-').map(Number);
  const last = to.slice(0, 7);
  for (;;) {
    const month = `${y}-${String(m).padStart(2, '0')}`;
    if (month > last) return out;
    out.push(month);
    m += 1;
    if (m === 13) { m = 1; y += 1; }
  }
}

/**
 * The `recurring` agenda lane's payroll dates (DOMAIN.md, agenda lanes: "recurring … payroll"):
 * the pay date of every payroll period ending in the window — the period's last day (monthly: the
 * month's; twice monthly: the 15th and the month's last day; Código Sustantivo del Trabajo art.
 * 134: pay periods of at most a month) — at the workspace's pay frequency: that of its latest live
 * run, monthly before its first run. A period with a live run shows that run (its own frequency,
 * net pay, status): `done` once posted, else `open`, or `overdue` when its date has passed; a
 * period not yet run is `open`/`overdue` with no run. With `overdue`, unpaid periods that ended up
 * to {@link OVERDUE_DAYS} days before the window show too. Nothing for a workspace with nobody
 * under contract and no runs. Contribution (PILA) due dates are not given: DOMAIN.md does not
 * state them and they depend on business days and the employer's NIT (Decreto 1990 de 2016).
 * Reads: one run (the latest) by position, one employee, and one lookup of the unique
 * (workspace, slot) per period (≤ 3 a month of a window of at most 400 days).
 */
export const payrollDatesLane: LaneReader = async (w, ctx) => {
  const runs = payrollRuns(ctx.db);
  const latest = (await listNewestFirst<RunDoc, RunDoc>(runs, { workspace: ctx.workspace, limit: 1, match: (r) => r.status !== 'void' }, (r) => r)).rows[0];
  if (!latest && !(await employees(ctx.db).exists({ workspace: ctx.workspace, status: 'active' }))) return [];
  const twice = latest ? latest.frequency !== 'monthly' : false;
  const start = w.overdue ? addDays(w.from, -OVERDUE_DAYS) : w.from;
  const today = localDate(ctx.now);
  const entries: AgendaEntry[] = [];
  for (const month of monthsBetween(start, w.to)) {
    // The month's live runs, whatever their frequency (a monthly run and halves never overlap).
    const lookups = await Promise.all(RUN_FREQUENCIES.map(async (f) => {
      const p = periodOf(month, f);
      return runs.findOne({ workspace: ctx.workspace, slot: `${p.from}/${p.to}` }, { _id: 1, status: 1, frequency: 1, period: 1, totals: 1, currency: 1 }).lean();
    }));
    const live = lookups.filter((r): r is NonNullable<typeof r> => r !== null);
    const planned: Frequency[] = twice ? ['first_half', 'second_half'] : ['monthly'];
    const periods: Frequency[] = live.some((r) => r.frequency === 'monthly') ? ['monthly'] : live.length ? ['first_half', 'second_half'] : planned;
    for (const f of periods) {
      const period = periodOf(month, f);
      const run = live.find((r) => r.frequency === f) ?? null;
      const date = period.to;
      const posted = run?.status === 'posted';
      if (date > w.to || date < start) continue;
      if (date < w.from && posted) continue;
      const [y, m] = month.split('-').map(Number);
      const name = `${MONTHS[m - 1]} ${y}`;
      entries.push({
        date, kind: 'reminder', source: 'recurring',
        title: f === 'monthly' ? `Pago de nómina de ${name}` : `Pago de nómina, ${f === 'first_half' ? 'primera' : 'segunda'} quincena de ${name}`,
        status: posted ? 'done' : date < today ? 'overdue' : 'open',
        ref: { module: 'payroll', month, frequency: f, period, run_id: run?._id ?? null, run_status: run?.status ?? null },
        ...(run ? { amount: run.totals.net, currency: run.currency } : { currency: 'COP' }),
      });
    }
  }
  entries.sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : 0));
  return entries.slice(0, w.limit);
};
