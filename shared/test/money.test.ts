import { describe, expect, it } from 'vitest';
import { applyRate, CuadraError, decimalAmount, decimalQuantity, lineAmounts, percentFromPpm, quantityMicros, reversedLines, sumAmounts } from '../src/index.ts';

/** The refusal a call throws, as {code, field}. */
function refusal(run: () => unknown): { code: string; field?: string } | null {
  try {
    run();
    return null;
  } catch (err) {
    if (err instanceof CuadraError) return { code: err.code, field: err.field };
    throw err;
  }
}

describe('exact money (CONTRACT §9)', () => {
  it('computes lines by hand-checked figures, rounding once half away from zero', () => {
    // 2.5 × 3,333,333 = 8,333,332.5 → 8,333,333; 19 % of it = 1,583,333.27 → 1,583,333.
    expect(lineAmounts(2.5, 3_333_333, 0, 190_000)).toEqual({ subtotal: 8_333_333, tax: 1_583_333, total: 9_916_666 });
    // 0.000001 × 10^15 = 10^9 exactly (a float product gives 999,999,999.9999999).
    expect(lineAmounts(0.000001, 1e15, 0, 0).subtotal).toBe(1_000_000_000);
    // 3 × 1,001 less 10 % = 2,702.7 → 2,703; 5 % VAT = 135.15 → 135.
    expect(lineAmounts(3, 1001, 1000, 50_000)).toEqual({ subtotal: 2703, tax: 135, total: 2838 });
    // 0.1 + 0.2 is not a quantity anybody typed: more than 6 decimals is refused, not rounded.
    expect(refusal(() => lineAmounts(0.1 + 0.2, 100, 0, 0, '/lines/4'))).toEqual({ code: 'invalid_input', field: '/lines/4/quantity' });
    // ReteICA 4.14 ‰ on 1,000,000.00 = 4,140.00; on 123.45 → 0.51 (0.511083 → 0.51).
    expect(applyRate(100_000_000, 4140)).toBe(414_000);
    expect(applyRate(12_345, 4140)).toBe(51);
  });

  it('refuses a line whose amounts would leave ±10^15, naming the line', () => {
    expect(refusal(() => lineAmounts(1e9, 1e15, 0, 190_000, '/lines/2'))).toEqual({ code: 'invalid_input', field: '/lines/2' });
    // The subtotal fits exactly at the limit; its 19 % VAT does not fit in the line total.
    expect(lineAmounts(1, 1e15, 0, 0)).toEqual({ subtotal: 1e15, tax: 0, total: 1e15 });
    expect(refusal(() => lineAmounts(1, 1e15, 0, 190_000, '/lines/0'))).toEqual({ code: 'invalid_input', field: '/lines/0' });
    expect(refusal(() => sumAmounts([6e14, 3e14, 2e14], (i) => `/lines/${i}`))).toEqual({ code: 'invalid_input', field: '/lines/2' });
    expect(sumAmounts([6e14, 4e14], (i) => `/lines/${i}`)).toBe(1e15);
  });

  it('writes plain decimals, never exponent notation', () => {
    expect(decimalAmount(1e15)).toBe('10000000000000.00');
    expect(decimalAmount(-5)).toBe('-0.05');
    expect(decimalQuantity(0.000001)).toBe('0.000001');
    expect(decimalQuantity(1e9)).toBe('1000000000');
    expect(decimalQuantity(12.5)).toBe('12.5');
    expect(percentFromPpm(190_000)).toBe('19.00');
    expect(percentFromPpm(4140)).toBe('0.414');
    expect(percentFromPpm(9660, 3)).toBe('0.966');
    expect(percentFromPpm(7)).toBe('0.0007');
    expect(percentFromPpm(0)).toBe('0.00');
  });

  it('reads quantities as exact millionths', () => {
    expect(quantityMicros(0.29, '/q')).toBe(290_000n);
    expect(quantityMicros(999_999_999.999999, '/q')).toBe(999_999_999_999_999n);
    for (const bad of [0, -1, 1e9 + 1, 1e-7, Number.NaN, 1.0000001]) expect(refusal(() => quantityMicros(bad, '/q'))?.field).toBe('/q');
  });
});

describe('reversedLines', () => {
  it('swaps every debit and credit and keeps the rest of each line, leaving the original alone', () => {
    // A customer payment of 1,190.00: Dr 111005 bank 119000 / Cr 130505 receivables 119000 (party c1).
    const posted = [
      { account: '111005', debit: 119_000, credit: 0, party_id: null },
      { account: '130505', debit: 0, credit: 119_000, party_id: 'c1', tags: { project: 'p1' } },
    ];
    const reversed = reversedLines(posted);
    expect(reversed).toEqual([
      { account: '111005', debit: 0, credit: 119_000, party_id: null },
      { account: '130505', debit: 119_000, credit: 0, party_id: 'c1', tags: { project: 'p1' } },
    ]);
    // Σ debits = Σ credits still (119000 = 119000), and the posted lines are untouched.
    expect(posted[0]).toEqual({ account: '111005', debit: 119_000, credit: 0, party_id: null });
    expect(reversedLines(reversed)).toEqual(posted);
  });
});
