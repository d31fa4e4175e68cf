// Colombia's 2026 public holidays, written out by hand from the law, against the library's answer.
import { describe, expect, it } from 'vitest';
import { colombianHolidays, isColombianHoliday } from '../src/holidays.ts';

describe('Colombian public holidays', () => {
  it('are 2026’s nineteen, the movable ones on Mondays (Ley 51 de 1983; Ley 2578 de 2026 for 9 July)', () => {
    // Easter 2026 is Sunday 5 April. Fixed days: 1 Jan, 1 May, 20 Jul, 7 Aug, 8 Dec, 25 Dec; Holy Thursday and Good Friday
    // (Easter − 3, − 2). Ley 51 moves to the next Monday: Epiphany 6 Jan (Tue) → 12 Jan; St Joseph 19 Mar (Thu) → 23 Mar;
    // Ascension Easter + 39 = 14 May (Thu) → 18 May; Corpus Christi Easter + 60 = 4 Jun (Thu) → 8 Jun; Sacred Heart
    // Easter + 68 = 12 Jun (Fri) → 15 Jun; Sts Peter and Paul 29 Jun (Mon) stays; Chiquinquirá 9 Jul (Thu) → 13 Jul;
    // Assumption 15 Aug (Sat) → 17 Aug; Columbus Day 12 Oct (Mon) stays; All Saints 1 Nov (Sun) → 2 Nov;
    // Cartagena 11 Nov (Wed) → 16 Nov.
    expect(colombianHolidays(2026).map((h) => h.date)).toEqual([
      '2026-01-01', '2026-01-12', '2026-03-23', '2026-04-02', '2026-04-03', '2026-05-01', '2026-05-18', '2026-06-08',
      '2026-06-15', '2026-06-29', '2026-07-13', '2026-07-20', '2026-08-07', '2026-08-17', '2026-10-12', '2026-11-02',
      '2026-11-16', '2026-12-08', '2026-12-25',
    ]);
    const mondays = ['2026-01-12', '2026-03-23', '2026-05-18', '2026-06-08', '2026-06-15', '2026-06-29', '2026-07-13', '2026-08-17', '2026-10-12', '2026-11-02', '2026-11-16'];
    for (const d of mondays) expect(new Date(`${d}T12:00:00Z`).getUTCDay()).toBe(1);
  });

  it('answers a date', () => {
    expect(isColombianHoliday('2026-11-16')).toBe(true);
    expect(isColombianHoliday('2026-11-11')).toBe(false);
    expect(isColombianHoliday('2026-04-05')).toBe(false);
  });
});
