import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { TestSubgraph } from '@cuadra/shared/testing';
import { invoices } from '../src/modules/invoices/model.ts';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { applyRollupIntent, markIntent, REPAIR_AFTER_MS, repairPendingRollups, rollupChanges, rollupIntent } from '../src/books/rollup-intents.ts';
import { rollups } from '../src/books/rollup-store.ts';
import { backfillLeaders, CATCH_UP, KEEP, LEADERS, leadersReady, partyLeaders, placeRow, RETRY_PROOF_MS, topFromEveryParty, topParties, type LeadersDoc } from '../src/books/party-leaders.ts';
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
const RETRY = RETRY_PROOF_MS.value;
const KEEP_ROWS = KEEP.rows;
const CATCH = { ...CATCH_UP };
afterEach(() => {
  LEADERS.kept = KEPT;
  RETRY_PROOF_MS.value = RETRY;
  KEEP.rows = KEEP_ROWS;
  Object.assign(CATCH_UP, CATCH);
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

describe('ties: every invoice one amount, as bench/scale.ts seeds them', () => {
  const AMOUNT = 15_000;
  const book: Book = new Map();
  let workspace: string;
  const id = (i: number) => `pty_t${String(i).padStart(2, '0')}`;
  const rows = (got: { rows: { id: string; value: number }[] }) => got.rows.map((r) => ({ id: r.id, value: r.value }));
  let n = 0;
  const postOne = async (party: string, day: string, amount: number) => {
    record(book, party, day, amount);
    await post(workspace, `inv_tie_${n++}`, party, day, amount);
  };

  beforeAll(async () => {
    LEADERS.kept = 4;
    workspace = (await configuredWorkspace(sg)).workspace;
    // 40 customers, 150 invoices of one amount over August–October: most customers tie with others
    // at 3 or 4 invoices, the lists (4 long) cut through the ties, so the leaders prove nothing.
    let seed = 777;
    const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    for (let k = 0; k < 150; k++) {
      const party = id(Math.floor(rand() * 40));
      const day = `2026-${['08', '09', '10'][Math.floor(rand() * 3)]}-${String(1 + Math.floor(rand() * 28)).padStart(2, '0')}`;
      await postOne(party, day, AMOUNT);
    }
    // Credit notes: one customer's whole September, another's one invoice of October.
    const sept = [...(book.get(id(3))?.entries() ?? [])].filter(([d]) => d.startsWith('2026-09'));
    for (const [day, v] of sept) await postOne(id(3), day, -v);
    const oct = [...(book.get(id(5))?.entries() ?? [])].find(([d]) => d.startsWith('2026-10'));
    if (oct) await postOne(id(5), oct[0], -AMOUNT);
  }, 300_000);

  it('answer every window and limit as the sums kept here and as every party, ties by id', async () => {
    LEADERS.kept = 4;
    const windows: [string, string][] = [['2026-08-01', '2026-10-31'], ['2026-08-15', '2026-10-20'], ['2026-09-01', '2026-09-30'], ['2026-10-03', '2026-10-03']];
    let failed = 0;
    for (const [from, to] of windows) {
      for (const limit of [1, 3, 5, 10, 40]) {
        const got = await topParties(sg.db, workspace, 'COP', from, to, 'revenue', limit);
        const want = expected(book, from, to, limit);
        expect({ from, to, limit, rows: rows(got) }).toEqual({ from, to, limit, rows: want });
        expect(got.rows).toEqual(await topFromEveryParty(sg.db, workspace, 'COP', from, to, 'revenue', limit));
        if (got.via === 'every party') failed++;
        // Ties: the equal totals come in id order.
        for (let i = 1; i < want.length; i++) if (want[i].value === want[i - 1].value) expect(want[i].id > want[i - 1].id).toBe(true);
      }
    }
    expect(failed).toBeGreaterThan(0);
  });

  it('keep an answer while nothing changes in its months, and bring it up to date by the party changed there', async () => {
    LEADERS.kept = 4;
    // A window not read before.
    const [from, to] = ['2026-08-02', '2026-10-31'];
    RETRY_PROOF_MS.value = 0;
    const first = await topParties(sg.db, workspace, 'COP', from, to, 'revenue', 6);
    expect(first).toMatchObject({ kept: false, tried: true, via: 'every party' });
    expect(rows(first)).toEqual(expected(book, from, to, 6));
    const again = await topParties(sg.db, workspace, 'COP', from, to, 'revenue', 6);
    expect(again).toMatchObject({ kept: true, tried: false, caughtUp: 0 });
    expect(again.rows).toEqual(first.rows);
    // A change outside the window's months leaves it as it was.
    await postOne(id(39), '2026-11-02', 9 * AMOUNT);
    expect(await topParties(sg.db, workspace, 'COP', from, to, 'revenue', 6)).toMatchObject({ kept: true, caughtUp: 0 });
    // A customer out of the six ties the sixth (and comes first by id, or one more makes it pass): the kept answer is brought up to date.
    const top6 = expected(book, from, to, 6);
    const last = top6[5];
    const entrant = [...book.keys()].sort().find((p) => !top6.some((r) => r.id === p))!;
    const has = expected(book, from, to, 40).find((r) => r.id === entrant)?.value ?? 0;
    await postOne(entrant, '2026-09-09', last.value - has + (entrant < last.id ? 0 : 1));
    const after = await topParties(sg.db, workspace, 'COP', from, to, 'revenue', 6);
    expect(after).toMatchObject({ kept: true, tried: false, caughtUp: 1 });
    expect(rows(after)).toEqual(expected(book, from, to, 6));
    expect(rows(after).map((r) => r.id)).toContain(entrant);
    expect(after.rows.find((r) => r.id === entrant)!.name).toBe(`Cliente ${entrant}`);
  });

  it('read every party without trying the leaders again for a while after they failed on that window', async () => {
    LEADERS.kept = 4;
    CATCH_UP.changes = 0;
    const [from, to] = ['2026-08-15', '2026-10-20'];
    RETRY_PROOF_MS.value = 60_000;
    await postOne(id(1), '2026-10-01', AMOUNT);
    const a = await topParties(sg.db, workspace, 'COP', from, to, 'revenue', 3);
    expect(a).toMatchObject({ kept: false, via: 'every party' });
    await postOne(id(2), '2026-10-02', AMOUNT);
    const b = await topParties(sg.db, workspace, 'COP', from, to, 'revenue', 3);
    expect(b).toMatchObject({ kept: false, tried: false, via: 'every party' });
    expect(rows(b)).toEqual(expected(book, from, to, 3));
    RETRY_PROOF_MS.value = 0;
    await postOne(id(2), '2026-10-02', -AMOUNT);
    const c = await topParties(sg.db, workspace, 'COP', from, to, 'revenue', 3);
    expect(c).toMatchObject({ kept: false, tried: true });
    expect(rows(c)).toEqual(expected(book, from, to, 3));
  });

  it('bring short kept lists up to date change by change, exactly: ties, credit notes, parties leaving and entering', async () => {
    LEADERS.kept = 4;
    KEEP.rows = 6;
    const windows: [string, string][] = [['2026-08-01', '2026-10-31'], ['2026-09-10', '2026-10-25']];
    let seed = 99;
    const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const read = async () => {
      for (const [from, to] of windows) {
        for (const limit of [1, 3, 6]) {
          const got = await topParties(sg.db, workspace, 'COP', from, to, 'revenue', limit);
          expect({ from, to, limit, rows: rows(got) }).toEqual({ from, to, limit, rows: expected(book, from, to, limit) });
          if (got.caughtUp > 0) caught++;
          if (!got.kept) afresh++;
        }
      }
    };
    let caught = 0;
    let afresh = 0;
    await read();
    for (let k = 0; k < 60; k++) {
      // Mostly the leading customers (ties among them, credit notes pushing them out), sometimes anyone.
      const top = expected(book, '2026-08-01', '2026-10-31', 8);
      const party = rand() < 0.6 && top.length ? top[Math.floor(rand() * top.length)].id : id(Math.floor(rand() * 40));
      const day = `2026-${['08', '09', '10'][Math.floor(rand() * 3)]}-${String(1 + Math.floor(rand() * 28)).padStart(2, '0')}`;
      await postOne(party, day, (rand() < 0.35 ? -1 : 1) * AMOUNT);
      await read();
    }
    expect(caught).toBeGreaterThan(30);
    expect(afresh).toBeGreaterThan(0);
  }, 300_000);

  it('reads while posts land at once end on the exact answer (a kept answer never outlives a change)', async () => {
    LEADERS.kept = 4;
    const [from, to] = ['2026-08-01', '2026-10-31'];
    let seed = 4242;
    const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const changes = Array.from({ length: 60 }, () => [id(Math.floor(rand() * 40)), `2026-10-${String(1 + Math.floor(rand() * 28)).padStart(2, '0')}`, (rand() < 0.25 ? -1 : 1) * AMOUNT] as const);
    let done = false;
    const reads: Promise<void> = (async () => {
      while (!done) await topParties(sg.db, workspace, 'COP', from, to, 'revenue', 5);
    })();
    for (let i = 0; i < changes.length; i += 20) await Promise.all(changes.slice(i, i + 20).map(([p, d, v]) => postOne(p, d, v)));
    done = true;
    await reads;
    for (const limit of [1, 5, 10]) {
      const got = await topParties(sg.db, workspace, 'COP', from, to, 'revenue', limit);
      expect(rows(got)).toEqual(expected(book, from, to, limit));
    }
  }, 120_000);
});

describe('placeRow', () => {
  const r = (id: string, value: number) => ({ id, name: id, value });
  it('keeps the promise of a kept list: whoever it does not list ranks after its last row', () => {
    KEEP.rows = 3;
    const list = [r('a', 9), r('b', 5), r('c', 5)];
    // Enters before the last (a tie broken by id), the last drops out and the list is no longer complete.
    expect(placeRow(list, true, r('bb', 5))).toEqual({ list: [r('a', 9), r('b', 5), r('bb', 5)], complete: false });
    // Ties the last with a larger id: stays out.
    expect(placeRow(list, false, r('d', 5))).toEqual({ list, complete: false });
    // A listed party falls behind the last: it leaves (the list gets shorter).
    expect(placeRow(list, false, r('a', 4))).toEqual({ list: [r('b', 5), r('c', 5)], complete: false });
    // The last itself falls: it leaves; the same total (changes that cancel): it stays.
    expect(placeRow(list, false, r('c', 4)).list).toEqual([r('a', 9), r('b', 5)]);
    expect(placeRow(list, false, r('c', 5)).list).toEqual(list);
    // At 0 a party leaves; a complete list takes any other total, negative ones last.
    expect(placeRow(list, true, r('b', 0)).list).toEqual([r('a', 9), r('c', 5)]);
    expect(placeRow([r('a', 9)], true, r('z', -2))).toEqual({ list: [r('a', 9), r('z', -2)], complete: true });
    expect(placeRow([], false, r('z', 7))).toEqual({ list: [], complete: false });
  });
});

describe('the day changes: a kept answer moved by the days that left and came', () => {
  const AMOUNT = 10_000;
  const id = (i: number) => `pty_d${String(i).padStart(2, '0')}`;
  const rows = (got: { rows: { id: string; value: number }[] }) => got.rows.map((r) => ({ id: r.id, value: r.value }));
  const day = (base: string, k: number) => new Date(Date.parse(`${base}T00:00:00Z`) + k * 86_400_000).toISOString().slice(0, 10);

  /**
   * Random books over August–October (ties: every change a multiple of one amount; credit notes),
   * then windows of several lengths moved day by day (sometimes 2 or 3 days), with changes between
   * the reads on the day that leaves, the day that comes and inside: every answer the ranking
   * computed here, and most of them moved rather than found again.
   */
  async function walk(seed: number, keepRows: number): Promise<{ rolled: number; reads: number }> {
    LEADERS.kept = 4;
    KEEP.rows = keepRows;
    RETRY_PROOF_MS.value = 0;
    const book: Book = new Map();
    const { workspace } = await configuredWorkspace(sg);
    let n = 0;
    const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const postOne = async (party: string, on: string, amount: number) => {
      record(book, party, on, amount);
      await post(workspace, `inv_day_${n++}`, party, on, amount);
    };
    for (let k = 0; k < 120; k++) await postOne(id(Math.floor(rand() * 24)), day('2026-08-01', Math.floor(rand() * 92)), (rand() < 0.15 ? -1 : 1 + Math.floor(rand() * 2)) * AMOUNT);
    let rolled = 0;
    let reads = 0;
    for (const length of [1, 7, 30]) {
      let to = '2026-09-10';
      await topParties(sg.db, workspace, 'COP', day(to, -(length - 1)), to, 'revenue', 5);
      for (let step = 0; step < 12; step++) {
        const move = rand() < 0.7 ? 1 : 1 + Math.floor(rand() * 3);
        const from = day(to, -(length - 1));
        const next = day(to, move);
        // Changes on the day that will leave, on a day that will come, and inside both windows.
        const on = [from, next, day(to, -Math.floor(rand() * length)), day(next, -Math.floor(rand() * move))];
        for (let c = Math.floor(rand() * 4); c > 0; c--) {
          const party = rand() < 0.5 ? (expected(book, from, to, 6)[Math.floor(rand() * 6)]?.id ?? id(0)) : id(Math.floor(rand() * 24));
          await postOne(party, on[Math.floor(rand() * on.length)], (rand() < 0.3 ? -1 : 1) * AMOUNT);
        }
        to = next;
        const nextFrom = day(to, -(length - 1));
        for (const limit of [5, 1, 3]) {
          const got = await topParties(sg.db, workspace, 'COP', nextFrom, to, 'revenue', limit);
          expect({ length, to, limit, rows: rows(got) }).toEqual({ length, to, limit, rows: expected(book, nextFrom, to, limit) });
          if (got.rolled > 0) rolled++;
          reads++;
        }
      }
    }
    return { rolled, reads };
  }

  it('answer every moved window exactly, kept lists cut short (parties entering from the day that came, leaving with the day that left)', async () => {
    const { rolled, reads } = await walk(2026, 6);
    expect(reads).toBe(108);
    expect(rolled).toBeGreaterThan(20);
  }, 300_000);

  it('answer every moved window exactly, kept lists whole (every party with a total listed)', async () => {
    const { rolled } = await walk(1128, 100);
    expect(rolled).toBeGreaterThan(20);
  }, 300_000);

  it('find the answer again when too many changes came since the day before', async () => {
    LEADERS.kept = 4;
    const { workspace } = await configuredWorkspace(sg);
    const book: Book = new Map();
    let n = 0;
    const postOne = async (party: string, on: string, amount: number) => {
      record(book, party, on, amount);
      await post(workspace, `inv_far_${n++}`, party, on, amount);
    };
    for (let i = 0; i < 10; i++) await postOne(id(i), `2026-09-0${1 + (i % 9)}`, (i + 1) * AMOUNT);
    await topParties(sg.db, workspace, 'COP', '2026-09-01', '2026-09-05', 'revenue', 3);
    for (let i = 0; i <= CATCH_UP.changes; i++) await postOne(id(i % 10), '2026-09-06', AMOUNT);
    const got = await topParties(sg.db, workspace, 'COP', '2026-09-02', '2026-09-06', 'revenue', 3);
    expect(got).toMatchObject({ kept: false, rolled: 0 });
    expect(rows(got)).toEqual(expected(book, '2026-09-02', '2026-09-06', 3));
  });
  it('a change on the day that leaves, in the rollups but not yet counted (its process died before the count), is not moved in: the answer is found again, exact before and after the repair', async () => {
    const { workspace } = await configuredWorkspace(sg);
    const book: Book = new Map();
    for (let i = 0; i < 4; i++) {
      record(book, id(i), '2026-09-03', (i + 1) * AMOUNT);
      await post(workspace, `inv_uncounted_${i}`, id(i), '2026-09-03', (i + 1) * AMOUNT);
    }
    // The window kept (every party listed: fewer than the limit).
    expect(rows(await topParties(sg.db, workspace, 'COP', '2026-09-01', '2026-09-05', 'revenue', 5))).toEqual(expected(book, '2026-09-01', '2026-09-05', 5));
    // A change of the first listed party on 09-01, the day that leaves next: its intent marked and its
    // rollups written (with their marks, as applyRollupIntent writes them), then its process dies before
    // the leaders and the count.
    const intent = rollupIntent([{ day: '2026-09-01', currency: 'COP', inc: { revenue: 9 * AMOUNT }, customer: { id: id(3), name: `Cliente ${id(3)}`, inc: { revenue: 9 * AMOUNT } } }], new Date(Date.now() - REPAIR_AFTER_MS - 1_000))!;
    await invoices(sg.db).collection.insertOne({ _id: 'inv_uncounted_dead', workspace, number_key: `uncounted:${workspace}`, pending_rollups: [intent], pending_count: 1 } as never);
    await markIntent(sg.db, workspace, invoices(sg.db), 'inv_uncounted_dead', intent);
    for (const [n, delta] of intent.deltas.entries()) {
      for (const change of rollupChanges(workspace, delta)) {
        await rollups(sg.db).collection.updateOne({ _id: change._id } as never, { $inc: change.inc, $addToSet: { applied: `${intent.id}#${n}` }, ...(change.set ? { $set: change.set } : {}), $setOnInsert: { workspace, currency: change.currency, grain: change.grain, period: change.period } } as never, { upsert: true });
      }
    }
    record(book, id(3), '2026-09-01', 9 * AMOUNT);
    // The day changed: 09-01 left the window, so the change is in neither the answer nor its total.
    const next = ['2026-09-02', '2026-09-06'] as const;
    expect(rows(await topParties(sg.db, workspace, 'COP', ...next, 'revenue', 5))).toEqual(expected(book, ...next, 5));
    expect(await repairPendingRollups(sg.db, workspace, [invoices(sg.db)])).toBe(1);
    expect(rows(await topParties(sg.db, workspace, 'COP', ...next, 'revenue', 5))).toEqual(expected(book, ...next, 5));
    // And the day after, moved from what was kept.
    const after = await topParties(sg.db, workspace, 'COP', '2026-09-03', '2026-09-07', 'revenue', 5);
    expect(rows(after)).toEqual(expected(book, '2026-09-03', '2026-09-07', 5));
    expect(after.rolled).toBe(1);
  });
});

describe('every writer of party totals counts its change (kept answers are never served stale)', () => {
  const AMOUNT = 10_000;
  const rows = (got: { rows: { id: string; value: number }[] }) => got.rows.map((r) => ({ id: r.id, value: r.value }));

  it('a bulk load (rollups written directly, then its leaders built) makes a kept answer be found again', async () => {
    const { workspace } = await configuredWorkspace(sg);
    const book: Book = new Map();
    for (let i = 0; i < 6; i++) {
      record(book, `pty_b${i}`, '2026-09-10', (i + 1) * AMOUNT);
      await post(workspace, `inv_bulk_${i}`, `pty_b${i}`, '2026-09-10', (i + 1) * AMOUNT);
    }
    const window = ['2026-09-01', '2026-09-30'] as const;
    expect(rows(await topParties(sg.db, workspace, 'COP', ...window, 'revenue', 3))).toEqual(expected(book, ...window, 3));
    expect(await topParties(sg.db, workspace, 'COP', ...window, 'revenue', 3)).toMatchObject({ kept: true });
    // The load: what two posts would write, summed and written as bench/scale-books.ts writes it.
    for (const [party, on] of [['pty_bulk', '2026-09-11'], ['pty_bulk', '2026-09-12']] as const) {
      record(book, party, on, 50 * AMOUNT);
      for (const change of rollupChanges(workspace, { day: on, currency: 'COP', inc: { revenue: 50 * AMOUNT }, customer: { id: party, name: 'Bulk', inc: { revenue: 50 * AMOUNT } } })) {
        await rollups(sg.db).collection.updateOne({ _id: change._id } as never, { $inc: change.inc, ...(change.set ? { $set: change.set } : {}), $setOnInsert: { workspace, currency: change.currency, grain: change.grain, period: change.period } } as never, { upsert: true });
      }
    }
    await backfillLeaders(sg.db, workspace);
    const after = await topParties(sg.db, workspace, 'COP', ...window, 'revenue', 3);
    expect(rows(after)).toEqual(expected(book, ...window, 3));
    expect(after.rows[0].id).toBe('pty_bulk');
    // Moved by a day, too: not from the answer kept before the load.
    expect(rows(await topParties(sg.db, workspace, 'COP', '2026-09-02', '2026-10-01', 'revenue', 3))).toEqual(expected(book, '2026-09-02', '2026-10-01', 3));
  });

  it('a post that died before its count is counted by its repair', async () => {
    const { workspace } = await configuredWorkspace(sg);
    const book: Book = new Map();
    for (let i = 0; i < 4; i++) {
      record(book, `pty_r${i}`, '2026-09-10', (i + 1) * AMOUNT);
      await post(workspace, `inv_rep_${i}`, `pty_r${i}`, '2026-09-10', (i + 1) * AMOUNT);
    }
    const window = ['2026-09-01', '2026-09-30'] as const;
    await topParties(sg.db, workspace, 'COP', ...window, 'revenue', 2);
    // The intent is on its document and marked; the process dies before applying it.
    const intent = rollupIntent([{ day: '2026-09-15', currency: 'COP', inc: { revenue: 9 * AMOUNT }, customer: { id: 'pty_late', name: 'Late', inc: { revenue: 9 * AMOUNT } } }], new Date(Date.now() - REPAIR_AFTER_MS - 1_000))!;
    await invoices(sg.db).collection.insertOne({ _id: 'inv_rep_late', workspace, pending_rollups: [intent], pending_count: 1 } as never);
    await markIntent(sg.db, workspace, invoices(sg.db), 'inv_rep_late', intent);
    expect(rows(await topParties(sg.db, workspace, 'COP', ...window, 'revenue', 2))).toEqual(expected(book, ...window, 2));
    record(book, 'pty_late', '2026-09-15', 9 * AMOUNT);
    expect(await repairPendingRollups(sg.db, workspace, [invoices(sg.db)])).toBe(1);
    const got = await topParties(sg.db, workspace, 'COP', ...window, 'revenue', 2);
    expect(rows(got)).toEqual(expected(book, ...window, 2));
    expect(got.rows[0].id).toBe('pty_late');
  });

  it('every file that writes per-party counters counts (a post\'s countPartyWrite, or a bulk load\'s backfillLeaders by workspace)', () => {
    // Who writes the rollups top-N reads: code that names the per-party counters (`rollupChanges`,
    // the one definition of what a change adds; `partyShardId`, their documents) and writes to a
    // collection. Each must count, or answers kept over its months outlive its change.
    const root = path.resolve(import.meta.dirname, '../../..');
    const files: string[] = [];
    const walkDir = (dir: string) => {
      for (const e of readdirSync(dir, { withFileTypes: true })) {
        if (e.name === 'node_modules' || e.name === 'test' || e.name.startsWith('.')) continue;
        const at = path.join(dir, e.name);
        if (e.isDirectory()) walkDir(at);
        else if (e.name.endsWith('.ts') && !e.name.endsWith('.test.ts')) files.push(at);
      }
    };
    for (const dir of ['subgraphs', 'shared/src', 'gateway/src', 'bench', 'scripts']) walkDir(path.join(root, dir));
    const writers = files.filter((f) => {
      const src = readFileSync(f, 'utf8');
      return /\b(rollupChanges|partyShardId)\(/.test(src) && /\.(updateOne|updateMany|insertOne|insertMany|bulkWrite|replaceOne|findOneAndUpdate)\(/.test(src);
    }).map((f) => path.relative(root, f));
    expect(writers).toEqual(expect.arrayContaining(['subgraphs/invoices/src/books/rollup-intents.ts', 'bench/scale-books.ts', 'bench/top-parties.ts']));
    const uncounted = writers.filter((f) => !/\bcountPartyWrite\(|\bbackfillLeaders\(\s*\w+,\s*\w+|\bcountBulkPartyWrites\(/.test(readFileSync(path.join(root, f), 'utf8')));
    expect(uncounted).toEqual([]);
  });
});

describe('kept answers, per workspace', () => {
  it("one workspace reading 2,001 windows forgets only its own least recently read ones, never another workspace's", async () => {
    const a = (await configuredWorkspace(sg)).workspace;
    const b = `ws_many_windows_${Date.now()}`;
    await post(a, 'kept-a-1', 'cust_kept_1', '2026-03-10', 5_000);
    await post(a, 'kept-a-2', 'cust_kept_2', '2026-03-11', 7_000);
    const window = ['2026-03-01', '2026-03-31'] as const;
    expect(await topParties(sg.db, a, 'COP', ...window, 'revenue', 5)).toMatchObject({ kept: false });
    expect(await topParties(sg.db, a, 'COP', ...window, 'revenue', 5)).toMatchObject({ kept: true });
    // Another workspace reads more windows than the 2,000 every workspace's kept answers were cleared at.
    const day = (i: number) => new Date(Date.UTC(2020, 0, 1) + i * 86_400_000).toISOString().slice(0, 10);
    for (let i = 0; i < 2_001; i++) await topParties(sg.db, b, 'COP', '2020-01-01', day(i), 'revenue', 5);
    // The first workspace's window is still kept: its next read is not a fresh one.
    const again = await topParties(sg.db, a, 'COP', ...window, 'revenue', 5);
    expect(again).toMatchObject({ kept: true });
    expect(again.rows.map((r) => [r.id, r.value])).toEqual([['cust_kept_2', 7_000], ['cust_kept_1', 5_000]]);
    // The other workspace kept only its most recent windows: its first one is found afresh.
    expect(await topParties(sg.db, b, 'COP', '2020-01-01', day(0), 'revenue', 5)).toMatchObject({ kept: false });
    expect(await topParties(sg.db, b, 'COP', '2020-01-01', day(2_000), 'revenue', 5)).toMatchObject({ kept: true });
  }, 120_000);
});
