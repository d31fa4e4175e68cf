import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { TestSubgraph } from '@cuadra/shared/testing';
import { invoices } from '../src/modules/invoices/model.ts';
import { applyRollupIntent, rollupIntent } from '../src/books/rollup-intents.ts';
import { backfillLeaders, LEADERS, leadersReady, partyLeaders, topParties, type LeadersDoc } from '../src/books/party-leaders.ts';
import { receivablesMetrics } from '../src/modules/invoices/metrics.ts';
import { configuredWorkspace, startInvoices } from './setup.ts';

// Top-N from the leaders kept at write time (books/party-leaders.ts), against sums the test keeps
// itself of every change it made: every answer must be the exact ranking, whether the leaders
// proved it or the read fell back to every party. Lists are made short (LEADERS.kept) so a few
// dozen parties overflow them, as thousands do with the real length.

let sg: TestSubgraph;
const KEPT = LEADERS.kept;
beforeAll(async () => {
  sg = await startInvoices();
});
afterEach(() => {
  LEADERS.kept = KEPT;
});
afterAll(async () => {
  await sg?.close();
});

/** What the test applied: party → day → Σ revenue. */
type Book = Map<string, Map<string, number>>;

function record(book: Book, party: string, day: string, amount: number): void {
  const days = book.get(party) ?? new Map<string, number>();
  days.set(day, (days.get(day) ?? 0) + amount);
  book.set(party, days);
}

/** The ranking computed here from the test's own book: Σ over the window's days, largest first, ties by id, zeros left out. */
function expected(book: Book, from: string, to: string, limit: number): { id: string; value: number }[] {
  const rows = [...book].map(([id, days]) => ({ id, value: [...days].reduce((s, [d, v]) => (d >= from && d <= to ? s + v : s), 0) }));
  return rows.filter((r) => r.value !== 0).sort((a, b) => b.value - a.value || a.id.localeCompare(b.id)).slice(0, limit);
}

/** One posted change of one customer's revenue, applied as every post applies its intent (rollups, then leaders). */
async function post(workspace: string, docId: string, party: string, day: string, amount: number): Promise<void> {
  const intent = rollupIntent([{ day, currency: 'COP', inc: { revenue: amount }, customer: { id: party, name: `Cliente ${party}`, inc: { revenue: amount } } }], new Date())!;
  await applyRollupIntent(sg.db, invoices(sg.db), docId, workspace, intent);
}

/** Every leaders document of the workspace keeps its promise: listed totals exact, everyone else within [low, bound]. */
async function checkLeaders(book: Book, workspace: string): Promise<number> {
  const docs = await partyLeaders(sg.db).find({ workspace } as never).toArray() as LeadersDoc[];
  for (const l of docs) {
    const inGrain = (party: string) => [...(book.get(party) ?? [])].reduce((s, [d, v]) => (d.startsWith(l.period) ? s + v : s), 0);
    for (const [party, v] of Object.entries(l.top)) expect({ party, period: l.period, v }).toEqual({ party, period: l.period, v: inGrain(party) });
    expect(Object.keys(l.top).length).toBeLessThanOrEqual(LEADERS.kept);
    for (const party of book.keys()) {
      if (party in l.top) continue;
      const v = inGrain(party);
      expect({ party, period: l.period, under: v <= l.bound, over: v >= l.low }).toEqual({ party, period: l.period, under: true, over: true });
    }
  }
  return docs.length;
}

describe('top-N from the leaders of days and months', () => {
  const book: Book = new Map();
  let workspace: string;
  let owner: Awaited<ReturnType<typeof configuredWorkspace>>;
  const id = (i: number) => `pty_${String(i).padStart(2, '0')}`;
  const months = Array.from({ length: 13 }, (_, i) => {
    const d = new Date(Date.UTC(2025, 10 + i, 1));
    return d.toISOString().slice(0, 7);
  });
  const top = (q: Record<string, unknown>) => receivablesMetrics.top_customers(q as never, { db: sg.db, workspace, now: new Date('2026-11-25T15:00:00Z') } as never) as Promise<{ rows: { customer_id: string; value: number; previous?: number; name: string }[]; summary: { value: number; previous?: number } }>;

  beforeAll(async () => {
    LEADERS.kept = 6;
    owner = await configuredWorkspace(sg);
    workspace = owner.workspace;
    const docId = 'inv_leaders_test';
    // 30 customers, each every month on its own day: skewed (customer i ~ (30 − i)²), so a month's
    // six leaders prove a year's top; 06 and 07 buy the same every month (a tie, broken by id).
    for (const m of months) {
      for (let i = 0; i < 30; i++) {
        const day = `${m}-${String((i % 28) + 1).padStart(2, '0')}`;
        const k = i === 7 ? 6 : i;
        const amt = (30 - k) ** 2 * 100 + ((k * 37) % 11);
        record(book, id(i), day, amt);
        await post(workspace, docId, id(i), day, amt);
      }
    }
    // Credit notes: 01 loses twice its October (a leader falls to below everyone that month), 12 goes below 0 in March.
    const credits: [number, string, number][] = [[1, '2026-10-15', -2 * (29 ** 2 * 100 + 37 % 11)], [12, '2026-03-20', -50_000], [0, '2026-11-01', -10_000]];
    for (const [i, day, amount] of credits) {
      record(book, id(i), day, amount);
      await post(workspace, docId, id(i), day, amount);
    }
  }, 300_000);

  it('keep exact totals for the listed parties and a true bound for everyone else', async () => {
    expect(await leadersReady(sg.db)).toBe(true);
    expect(await checkLeaders(book, workspace)).toBeGreaterThan(13 * 2);
  });

  it('answer 1 day, a month, 90 days and 366 days by month exactly, as the sums kept here (credit notes, a tie)', async () => {
    const windows: [string, string][] = [
      ['2026-10-15', '2026-10-15'], ['2026-10-02', '2026-10-02'], ['2026-10-01', '2026-10-31'], ['2026-03-01', '2026-03-31'],
      ['2026-08-28', '2026-11-25'], ['2025-11-25', '2026-11-25'], ['2025-11-01', '2026-10-31'],
    ];
    const proven: string[] = [];
    for (const [from, to] of windows) {
      for (const limit of [1, 3, 5, 8, 10, 30]) {
        const m = await top({ metric: 'top_customers', from, to, interval: 'month', limit });
        const want = expected(book, from, to, limit);
        expect({ from, to, limit, rows: m.rows.map((r) => ({ id: r.customer_id, value: r.value })) }).toEqual({ from, to, limit, rows: want });
        expect(m.summary.value).toBe(want.reduce((s, r) => s + r.value, 0));
        const direct = await topParties(sg.db, workspace, 'COP', from, to, 'revenue', limit);
        if (direct.via === 'leaders') proven.push(`${from}..${to} ${limit}`);
      }
    }
    // The tie: 06 and 07 bought the same in October, 06 first by id.
    const oct = expected(book, '2026-10-01', '2026-10-31', 30).map((r) => r.id);
    expect(oct.indexOf(id(6)) + 1).toBe(oct.indexOf(id(7)));
    // The leaders proved the skewed windows' top without reading every party.
    expect(proven).toEqual(expect.arrayContaining(['2026-10-01..2026-10-31 3', '2025-11-25..2026-11-25 3', '2025-11-25..2026-11-25 5', '2026-08-28..2026-11-25 5']));
  });

  it('compare a window with the one before, per row, exactly', async () => {
    const m = await top({ metric: 'top_customers', from: '2026-10-01', to: '2026-10-31', limit: 5, compare: 'previous_period' });
    const prev = expected(book, '2026-09-01', '2026-09-30', 30);
    for (const r of m.rows) expect(r.previous).toBe(prev.find((p) => p.id === r.customer_id)?.value ?? 0);
  });

  it('are rebuilt from the shards for days and months written before them, to the same answers', async () => {
    const before = await top({ metric: 'top_customers', from: '2025-11-25', to: '2026-11-25', limit: 10 });
    await partyLeaders(sg.db).deleteMany({ workspace } as never);
    expect(await backfillLeaders(sg.db, workspace)).toBeGreaterThan(13 * 2);
    await checkLeaders(book, workspace);
    expect(await top({ metric: 'top_customers', from: '2025-11-25', to: '2026-11-25', limit: 10 })).toEqual(before);
  });
});

describe('leaders under concurrent posts', () => {
  it('many posts at once, increases and decreases, leave every leaders document exact and every answer exact', async () => {
    LEADERS.kept = 4;
    const owner = await configuredWorkspace(sg);
    const book: Book = new Map();
    const day = '2026-11-12';
    let seed = 12345;
    const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const changes: [string, number][] = Array.from({ length: 240 }, () => {
      const party = `pty_r${String(Math.floor(rand() * 24)).padStart(2, '0')}`;
      const amount = Math.round((rand() < 0.3 ? -1 : 1) * (1 + rand() * 9)) * 1000;
      return [party, amount];
    });
    for (const [party, amount] of changes) record(book, party, day, amount);
    // All at once, in waves of 60 (each change is its own intent, as concurrent posts are).
    for (let i = 0; i < changes.length; i += 60) {
      await Promise.all(changes.slice(i, i + 60).map(([party, amount], n) => post(owner.workspace, `inv_race_${i + n}`, party, day, amount)));
    }
    expect(await checkLeaders(book, owner.workspace)).toBe(2);
    const l = await partyLeaders(sg.db).findOne({ _id: `${owner.workspace}|COP|d|${day}|L|revenue` });
    expect(l!.bound).toBeGreaterThan(0);
    for (const limit of [1, 2, 3, 4, 10]) {
      for (const [from, to] of [[day, day], ['2026-11-01', '2026-11-30']]) {
        const got = await topParties(sg.db, owner.workspace, 'COP', from, to, 'revenue', limit);
        expect(got.rows.map((r) => ({ id: r.id, value: r.value }))).toEqual(expected(book, from, to, limit));
      }
    }
  }, 120_000);
});
