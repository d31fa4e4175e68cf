import { daysBetween } from '@cuadra/shared';

/** The aging buckets of DOMAIN.md, in order. */
export const AGING_BUCKETS = ['current', '1_30', '31_60', '61_90', 'over_90'] as const;
export type AgingBucket = (typeof AGING_BUCKETS)[number];

/** The bucket of an amount due on `dueDate`, seen at `asOf`. */
export function agingBucket(dueDate: string, asOf: string): AgingBucket {
  const late = daysBetween(dueDate, asOf);
  if (late <= 0) return 'current';
  if (late <= 30) return '1_30';
  if (late <= 60) return '31_60';
  if (late <= 90) return '61_90';
  return 'over_90';
}

/** What an invoice still owed at `asOf`: its amount due less settlements dated on or before it. */
export function balanceAt(inv: { amount_due: number; issue_date: string; settlements: readonly { date: string; amount: number }[] }, asOf: string): number {
  if (inv.issue_date > asOf) return 0;
  return inv.amount_due - inv.settlements.filter((s) => s.date <= asOf).reduce((sum, s) => sum + s.amount, 0);
}

/** Aging of open invoices at `asOf`: amount and count per bucket, and the total. */
export function agingBuckets(open: readonly { amount_due: number; issue_date: string; due_date: string; settlements: readonly { date: string; amount: number }[] }[], asOf: string) {
  const rows = AGING_BUCKETS.map((bucket) => ({ bucket, value: 0, count: 0 }));
  for (const inv of open) {
    const balance = balanceAt(inv, asOf);
    if (balance <= 0) continue;
    const row = rows[AGING_BUCKETS.indexOf(agingBucket(inv.due_date, asOf))];
    row.value += balance;
    row.count += 1;
  }
  return { rows, total: rows.reduce((s, r) => s + r.value, 0) };
}
