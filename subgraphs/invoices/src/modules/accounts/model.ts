import { decodeCursor, encodeCursor, type ListAnswer } from '@cuadra/shared';
import type { Connection } from 'mongoose';
import { ACCOUNT_TYPES, CLASSES } from '../../accounting/puc.ts';
import { wholeChart, type ChartAccount } from '../../accounting/chart.ts';

/** A code as tools take it (PUC shape: 1, 2, 4, 6 … 12 digits, classes 1–7). */
export const CODE_SCHEMA = { type: 'string', pattern: '^[1-7]([0-9]([0-9]{2}){0,5})?$' } as const;

/** The filters of accounts.list. */
export const ACCOUNT_FILTERS = {
  class: { enum: CLASSES },
  type: { enum: ACCOUNT_TYPES },
  status: { enum: ['active', 'archived'] },
  parent: CODE_SCHEMA,
  search: { type: 'string', minLength: 1, maxLength: 100 },
} as const;

/** The filters a page of the chart takes. */
export interface AccountFilter { class?: string; type?: string; status?: string; parent?: string; search?: string }

/** The one test accounts.list and the `accounts` source filter by. */
export function accountFilter(f: AccountFilter): (a: ChartAccount) => boolean {
  const needle = f.search?.toLowerCase();
  return (a) => (!f.class || a.class === f.class) && (!f.type || a.type === f.type) && (!f.status || a.status === f.status)
    && (!f.parent || (a.code !== f.parent && a.code.startsWith(f.parent)))
    && (!needle || a.code.includes(needle) || a.name.toLowerCase().includes(needle));
}

/** The cursor series of the chart: a cursor carries the last code given (codes are digits, so a number). */
const SERIES = 'accounts';

/**
 * One page of the chart in code order. The chart is the PUC (in memory) plus at most
 * MAX_WORKSPACE_ACCOUNTS documents of the workspace, so a page reads a bounded set.
 */
export async function chartPage(db: Connection, workspace: string, f: AccountFilter, limit: number, cursor: string | undefined): Promise<ListAnswer<ChartAccount>> {
  const after = cursor ? String(decodeCursor(SERIES, workspace, cursor)) : null;
  const filtered = Object.values(f).some((v) => v !== undefined);
  const all = (await wholeChart(db, workspace)).filter(accountFilter(f));
  const rest = after ? all.filter((a) => a.code > after) : all;
  const rows = rest.slice(0, limit);
  const page: ListAnswer<ChartAccount> = { rows };
  if (!filtered) page.total = all.length;
  if (rest.length > limit) page.next_cursor = encodeCursor(SERIES, workspace, Number(rows[rows.length - 1].code));
  return page;
}
