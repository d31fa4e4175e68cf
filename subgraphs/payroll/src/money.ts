import { checkedAmount, MONEY_LIMIT } from '@cuadra/shared';

/**
 * Payroll's money, given and computed, within the contract's bound (CONTRACT §9: every amount an
 * integer number of minor units within ±10^15). Every money field of a payroll tool's input is
 * one of these schemas, so none can ask for more; a run checks what it computes from them
 * ({@link assertWithinMoneyLimit}), since salaries within the bound can still make totals beyond it.
 */

/** An amount a caller gives: integer minor units, above zero, at most 10^15. */
export const PAYROLL_AMOUNT_SCHEMA = { type: 'integer', minimum: 1, maximum: MONEY_LIMIT } as const;
/** An amount a caller states, zero allowed (the net pay of a run being approved). */
export const PAYROLL_TOTAL_SCHEMA = { type: 'integer', minimum: 0, maximum: MONEY_LIMIT } as const;

/**
 * Refuses (`invalid_input` at `field`) the first computed amount beyond ±10^15. `amounts` are
 * named figures (integers: the engine rounds every line once); `whose` says whose they are (an
 * employee, the run) to the person reading the refusal.
 */
export function assertWithinMoneyLimit(amounts: Iterable<readonly [string, number]>, whose: string, field: string): void {
  for (const [what, amount] of amounts) checkedAmount(BigInt(amount), field, `${whose}: ${what}`);
}
