import { CuadraError } from '@cuadra/shared';
import type { EmployeeDoc } from './model.ts';

/**
 * The agreed last day a contract records: a fixed-term contract has one (CST art. 46: written,
 * with its term; the indemnity for dismissal pays up to it, art. 64), no other contract does.
 * `invalid_input` at /term_end otherwise, or when it falls before the hire date.
 */
export function contractTerm(contractType: EmployeeDoc['contract_type'], termEnd: string | null | undefined, hireDate: string): string | null {
  if (contractType !== 'fixed_term') {
    if (termEnd) throw new CuadraError('invalid_input', `A ${contractType} contract has no agreed end; term_end is for fixed_term contracts.`, { field: '/term_end' });
    return null;
  }
  if (!termEnd) throw new CuadraError('invalid_input', 'A fixed-term contract records the agreed last day of its term (term_end).', { field: '/term_end' });
  if (termEnd < hireDate) throw new CuadraError('invalid_input', `The term cannot end before the hire date ${hireDate}.`, { field: '/term_end' });
  return termEnd;
}
