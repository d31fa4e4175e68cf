import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Connection } from 'mongoose';
import { connectDatabase } from '../src/db.ts';
import { Governance } from '../src/governance/index.ts';
import { Ledger } from '../src/governance/ledger.ts';
import type { Principal } from '../src/principal.ts';
import { addDays, buckets, calendarDays, countSeries, endOfMonth, localDate, localDayStart, previousWindow, queryWindow, windowProblem } from '../src/periods.ts';

describe('metric query periods', () => {
  it('lists calendar days as stepping addDays by one does: month and year ends, leap years, empty and odd ranges', () => {
    const stepped = (from: string, to: string) => {
      const out: string[] = [];
      for (let d = from; d <= to; d = addDays(d, 1)) out.push(d);
      return out;
    };
    expect(calendarDays('2024-02-27', '2024-03-01')).toEqual(['2024-02-27', '2024-02-28', '2024-02-29', '2024-03-01']);
    expect(calendarDays('1900-02-28', '1900-03-01')).toEqual(['1900-02-28', '1900-03-01']);
    expect(calendarDays('2026-12-31', '2027-01-01')).toEqual(['2026-12-31', '2027-01-01']);
    expect(calendarDays('2026-11-26', '2026-11-25')).toEqual([]);
    for (const [from, to] of [['2000-02-25', '2001-03-05'], ['2023-01-31', '2023-03-01'], ['2026-02-30', '2026-03-04'], ['0999-12-30', '1000-01-02']]) {
      expect(calendarDays(from, to)).toEqual(stepped(from, to));
    }
    for (let i = 0; i < 200; i++) {
      const from = addDays('1990-01-01', (i * 7919) % 15000);
      expect(calendarDays(from, addDays(from, i % 400))).toEqual(stepped(from, addDays(from, i % 400)));
    }
    expect(buckets({ from: '2026-02-26', to: '2026-03-02' }, 'day').map((b) => b.period_end)).toEqual(['2026-02-26', '2026-02-27', '2026-02-28', '2026-03-01', '2026-03-02']);
  });

  it('builds windows, clipped buckets and the comparison window', () => {
    expect(queryWindow({ days: 7 }, '2026-11-30')).toEqual({ from: '2026-11-24', to: '2026-11-30' });
    expect(queryWindow({ from: '2026-01-01', to: '2026-01-31', days: 7 }, '2026-11-30')).toEqual({ from: '2026-01-01', to: '2026-01-31' });
    expect(buckets({ from: '2026-11-01', to: '2026-11-15' }, 'week').map((b) => b.period)).toEqual(['2026-11-01', '2026-11-02', '2026-11-09']);
    expect(buckets({ from: '2026-10-15', to: '2026-12-02' }, 'month').at(-1)).toEqual({ period: '2026-12-01', period_end: '2026-12-02' });
    expect(previousWindow({ from: '2026-11-01', to: '2026-11-30' }, 'previous_period')).toEqual({ from: '2026-10-02', to: '2026-10-31' });
    expect(previousWindow({ from: '2024-02-29', to: '2024-03-31' }, 'previous_year')).toEqual({ from: '2023-02-28', to: '2023-03-31' });
    expect(windowProblem({ from: '2026-01-01' })).toMatchObject({ field: '/to' });
    expect(windowProblem({ from: '2026-02-01', to: '2026-01-01' })).toMatchObject({ field: '/from' });
    expect(windowProblem({ from: '2025-01-01', to: '2026-01-02' })).toMatchObject({ field: '/to' });
    expect(windowProblem({ from: '2025-01-01', to: '2026-01-01' })).toBeNull();
  });

  it('adds days and finds month ends as the calendar does (checked against epoch-day arithmetic)', () => {
    // Independent: whole days as milliseconds from the epoch; month lengths from the Gregorian rule.
    const byEpoch = (date: string, days: number) => new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
    const leap = (y: number) => y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
    const monthEnd = (date: string) => {
      const y = Number(date.slice(0, 4));
      const m = Number(date.slice(5, 7));
      return `${date.slice(0, 7)}-${[31, leap(y) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1]}`;
    };
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const first = Date.UTC(1000, 0, 1);
    const span = (Date.UTC(9990, 0, 1) - first) / 86_400_000;
    for (let i = 0; i < 20_000; i++) {
      const date = new Date(first + Math.floor(next() * span) * 86_400_000).toISOString().slice(0, 10);
      const days = Math.floor((next() - 0.5) * 4000);
      expect(addDays(date, days)).toBe(byEpoch(date, days));
      expect(endOfMonth(date)).toBe(monthEnd(date));
    }
    expect(addDays('2024-02-28', 1)).toBe('2024-02-29');
    expect(addDays('2100-02-28', 1)).toBe('2100-03-01');
    expect(addDays('1000-01-01', -1)).toBe('0999-12-31');
    expect(endOfMonth('2000-02-10')).toBe('2000-02-29');
    // Not a calendar date: refused as before.
    expect(() => addDays('2024-02-30x', 1)).toThrow(RangeError);
  });

  it('reads calendar dates in Colombian time', () => {
    expect(localDate(new Date('2026-11-22T04:59:59Z'))).toBe('2026-11-21');
    expect(localDate(new Date('2026-11-22T05:00:00Z'))).toBe('2026-11-22');
    expect(localDayStart('2026-11-22')).toBe('2026-11-22T05:00:00.000Z');
  });

  it('counts dates per bucket, with the comparison window as previous', () => {
    const r = countSeries(['2026-11-02', '2026-11-03', '2026-11-10', '2026-10-27', '2026-12-01'], { from: '2026-11-02', to: '2026-11-15', interval: 'week', compare: 'previous_period' }, '2026-11-30');
    expect(r).toEqual({
      value: 3, previous: 1,
      // The previous period is 2026-10-19 … 11-01, in the same weeks: 10-27 is in its second.
      series: [{ period: '2026-11-02', period_end: '2026-11-08', value: 2, previous: 0 }, { period: '2026-11-09', period_end: '2026-11-15', value: 1, previous: 1 }],
    });
  });
});

describe('Ledger.span', () => {
  let db: Connection;
  beforeAll(async () => {
    db = await connectDatabase(process.env.MONGO_URL!, `test_span_${randomBytes(4).toString('hex')}`);
    await new Governance(db).init();
  });
  afterAll(async () => {
    await db.dropDatabase().catch(() => undefined);
    await db.close();
  });

  it('walks back from the head, stops at the first window wholly before the span, and caps the walk', async () => {
    const ledger = new Ledger(db);
    const ws = `ws_${randomBytes(4).toString('hex')}`;
    const principal: Principal = { workspace: ws, role: 'owner', actor: { type: 'api_key', id: 'k' }, credential_id: 'k', scopes: null, patterns: null };
    await Promise.all(Array.from({ length: 1200 }, (_, i) => ledger.append({ principal, tool: i % 3 === 0 ? 'tasks.create' : 'projects.list', risk: 'read', input_digest: null, outcome: 'ok', duration_ms: 1 })));
    // Entries 201–700 happened in 2020; 1–200 claim 2030 (never so in a real chain: the walk has stopped before them).
    await ledger.entries.updateMany({ workspace: ws, seq: { $gt: 200, $lte: 700 } }, { $set: { at: '2020-01-01T12:00:00.000Z' } });
    await ledger.entries.updateMany({ workspace: ws, seq: { $lte: 200 } }, { $set: { at: '2030-01-01T12:00:00.000Z' } });
    const recent = await ledger.span(ws, '2026-01-01T00:00:00.000Z', '2031-01-01T00:00:00.000Z');
    expect(recent.truncated).toBe(false);
    expect(recent.entries).toHaveLength(500);
    expect(recent.entries[0]).toEqual({ at: expect.any(String), tool: expect.any(String), module: expect.any(String), outcome: 'ok' });
    const old = await ledger.span(ws, '2020-01-01T00:00:00.000Z', '2020-01-02T00:00:00.000Z');
    expect(old.entries).toHaveLength(500);
    const capped = await ledger.span(ws, '2019-01-01T00:00:00.000Z', '2031-01-01T00:00:00.000Z', 500);
    expect(capped).toMatchObject({ truncated: true });
    expect(capped.entries).toHaveLength(500);
    expect((await ledger.span(`ws_${randomBytes(4).toString('hex')}`, '2019-01-01T00:00:00.000Z', '2031-01-01T00:00:00.000Z')).entries).toEqual([]);
  });
});
