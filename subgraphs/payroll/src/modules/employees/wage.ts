import { CuadraError } from '@cuadra/shared';
import { minimumWageFor } from '../../parameters.ts';

function pesos(cents: number): string {
  return (cents / 100).toLocaleString('en-US');
}

/**
 * Refuses (`invalid_input` at `field`) a COP salary under a labour contract (not `service`) that
 * is below the minimum monthly wage of the year `date` falls in.
 */
export function assertMinimumWage(salary: { amount: number; currency: string }, contractType: string, date: string, field: string): void {
  if (salary.currency !== 'COP' || contractType === 'service') return;
  const minimum = minimumWageFor(date);
  if (salary.amount < minimum.amount) {
    throw new CuadraError(
      'invalid_input',
      `The salary is below the ${minimum.year} Colombian minimum monthly wage of COP ${pesos(minimum.amount)} (${minimum.source}); ` +
        `amounts are in cents, so that wage is ${minimum.amount}.`,
      { field },
    );
  }
}
