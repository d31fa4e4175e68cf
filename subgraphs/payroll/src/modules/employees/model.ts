import { addPositions, containsText, DATE_TIME_SCHEMA as DATE_TIME, TEXT_SCHEMA as TEXT, modelOn } from '@cuadra/shared';
import { Schema, type Connection, type Model } from 'mongoose';
import { SETTLEMENT_CONCEPTS, TERMINATION_REASONS, type SettlementLine, type TerminationReason } from '../payroll/settlement.ts';

/** Identity documents an employee can be registered with (cédula, cédula de extranjería, passport, NIT). */
export const DOCUMENT_TYPES = ['CC', 'CE', 'PASSPORT', 'NIT'] as const;

/**
 * Contract types: `service` is a contrato de prestación de servicios (a contractor, not an
 * employee under the labour code), which is why the minimum wage does not bind it.
 */
export const CONTRACT_TYPES = ['indefinite', 'fixed_term', 'apprenticeship', 'service'] as const;

/** An employee as stored. `_id` is our own prefixed string id (`emp_…`), never a Mongo ObjectId. */
export interface EmployeeDoc {
  _id: string;
  /** Every read and write filters on this: the workspace seal. */
  workspace: string;
  name: string;
  /** Lower-cased name, for case-insensitive search without a collation. */
  name_lc: string;
  /**
   * The number is stored normalised (no dots, spaces or dashes; upper case), so
   * `1.020.304.050` and `1020304050` are the same person for the unique index.
   */
  document: { type: (typeof DOCUMENT_TYPES)[number]; number: string };
  email: string | null;
  position: string;
  /** A calendar date (YYYY-MM-DD), not an instant: kept as text so no time zone can move it a day. */
  hire_date: string;
  /** Monthly salary in integer minor units of `currency`. */
  salary: { amount: number; currency: string };
  contract_type: (typeof CONTRACT_TYPES)[number];
  /**
   * A fixed-term contract's agreed last day, of the term now running (a renewal moves it, through
   * employees.update): what the indemnity for dismissal pays up to (CST art. 64). Null for other
   * contracts; absent on fixed-term contracts recorded before it was kept.
   */
  term_end?: string | null;
  /** Occupational-risk class I–V: sets the employer's ARL rate (0.522 %–6.96 %). */
  arl_class: 1 | 2 | 3 | 4 | 5;
  status: 'active' | 'terminated';
  /**
   * Every salary the contract has had, oldest first: from `effective_from` on, the monthly salary
   * is `amount`. `salary` is the last of them. Absent on employees hired before salary changes
   * existed: read it through {@link salaryHistoryOf}.
   */
  salary_history?: SalaryStep[];
  /** Set once, by employees.terminate: the last day of the contract, why, and the final settlement. */
  termination?: Termination | null;
  /** Bumped by every change: the condition of the next one, so two concurrent changes cannot both apply. */
  rev?: number;
  created_at: Date;
  updated_at: Date;
}

/** One salary of the contract, from a date on. */
export interface SalaryStep { amount: number; effective_from: string; changed_at: Date | null }

export interface Termination {
  date: string;
  reason: TerminationReason;
  note: string | null;
  /** The final settlement (payroll/settlement.ts), the indemnity included when one is owed. */
  settlement: { lines: SettlementLine[]; total: number };
  at: Date;
}

/** The salary history of an employee, for documents written before histories were kept too. */
export function salaryHistoryOf(e: Pick<EmployeeDoc, 'salary_history' | 'salary' | 'hire_date'>): SalaryStep[] {
  return e.salary_history?.length ? e.salary_history : [{ amount: e.salary.amount, effective_from: e.hire_date, changed_at: null }];
}

const employeeSchema = new Schema<EmployeeDoc>(
  {
    _id: { type: String, required: true },
    workspace: { type: String, required: true },
    name: { type: String, required: true },
    name_lc: { type: String, required: true },
    document: { type: Schema.Types.Mixed, required: true },
    email: { type: String, default: null },
    position: { type: String, required: true },
    hire_date: { type: String, required: true },
    salary: { type: Schema.Types.Mixed, required: true },
    contract_type: { type: String, required: true },
    term_end: { type: String, default: null },
    arl_class: { type: Number, required: true },
    status: { type: String, required: true, default: 'active' },
    salary_history: { type: Schema.Types.Mixed, default: undefined },
    termination: { type: Schema.Types.Mixed, default: null },
    rev: { type: Number, default: 0 },
    created_at: { type: Date, required: true },
    updated_at: { type: Date, required: true },
  },
  { versionKey: false },
);
employeeSchema.index({ workspace: 1, name_lc: 1 });
// payroll_employees counts hires per period.
employeeSchema.index({ workspace: 1, hire_date: 1 });
// One payroll record per person and workspace: the document number is the person.
employeeSchema.index({ workspace: 1, 'document.number': 1 }, { unique: true });
// Lists page newest first by position (CONTRACT §9).
addPositions(employeeSchema);

/** The employees collection on this subgraph's connection. */
export function employees(db: Connection): Model<EmployeeDoc> {
  return modelOn<EmployeeDoc>(db, 'Employee', employeeSchema, 'employees');
}


/** JSON Schema of {@link employeeView}: what every tool answering an employee gives. */
export const EMPLOYEE_VIEW_SCHEMA = {
  type: 'object', additionalProperties: false,
  required: ['id', 'name', 'document', 'email', 'position', 'hire_date', 'salary', 'salary_history', 'contract_type', 'term_end', 'arl_class', 'status', 'termination', 'created_at', 'updated_at'],
  properties: {
    id: TEXT,
    name: TEXT,
    document: {
      type: 'object', additionalProperties: false, required: ['type', 'number'],
      properties: { type: { enum: [...DOCUMENT_TYPES] }, number: TEXT },
    },
    email: { type: ['string', 'null'] },
    position: TEXT,
    hire_date: { type: 'string', format: 'date' },
    salary: {
      type: 'object', additionalProperties: false, required: ['amount', 'currency'],
      // Monthly salary in integer minor units of `currency`.
      properties: { amount: { type: 'integer' }, currency: TEXT },
    },
    salary_history: {
      type: 'array',
      items: {
        type: 'object', additionalProperties: false, required: ['amount', 'effective_from'],
        properties: { amount: { type: 'integer' }, effective_from: { type: 'string', format: 'date' } },
      },
    },
    contract_type: { enum: [...CONTRACT_TYPES] },
    /** A fixed-term contract's agreed last day (null for other contracts, or when not recorded). */
    term_end: { type: ['string', 'null'], format: 'date' },
    arl_class: { enum: [1, 2, 3, 4, 5] },
    status: { enum: ['active', 'terminated'] },
    termination: {
      type: ['object', 'null'], additionalProperties: false, required: ['date', 'reason', 'note', 'settlement'],
      properties: {
        date: { type: 'string', format: 'date' },
        reason: { enum: [...TERMINATION_REASONS] },
        note: { type: ['string', 'null'] },
        settlement: {
          type: 'object', additionalProperties: false, required: ['lines', 'total'],
          properties: {
            lines: {
              type: 'array',
              items: {
                type: 'object', additionalProperties: false, required: ['concept', 'amount', 'base', 'days'],
                properties: {
                  concept: { enum: [...SETTLEMENT_CONCEPTS] }, amount: { type: 'integer' }, base: { type: 'integer' }, days: { type: 'integer' },
                  /** How the indemnity (CST art. 64) was reckoned, in Spanish. */
                  note: { type: 'string' },
                },
              },
            },
            total: { type: 'integer' },
          },
        },
      },
    },
    created_at: DATE_TIME,
    updated_at: DATE_TIME,
  },
} as const;

/** The public shape of an employee (tool output). */
export function employeeView(e: EmployeeDoc) {
  return {
    id: e._id,
    name: e.name,
    document: { type: e.document.type, number: e.document.number },
    email: e.email,
    position: e.position,
    hire_date: e.hire_date,
    salary: { amount: e.salary.amount, currency: e.salary.currency },
    salary_history: salaryHistoryOf(e).map((s) => ({ amount: s.amount, effective_from: s.effective_from })),
    contract_type: e.contract_type,
    term_end: e.term_end ?? null,
    arl_class: e.arl_class,
    status: e.status,
    termination: e.termination
      ? { date: e.termination.date, reason: e.termination.reason, note: e.termination.note, settlement: { lines: e.termination.settlement.lines.map((l) => ({ ...l })), total: e.termination.settlement.total } }
      : null,
    created_at: e.created_at.toISOString(),
    updated_at: e.updated_at.toISOString(),
  };
}

/**
 * Whether an employee matches a lower-cased search term as employees.list searches: the name or
 * the identity document number (stored without separators, so the term is normalised the same way).
 */
export function employeeMatches(e: EmployeeDoc, needle: string): boolean {
  const number = needle.replace(/[.\s-]/g, '').toUpperCase();
  return e.name_lc.includes(needle) || (!!number && e.document.number.includes(number));
}

/**
 * Whether an employee matches a lower-cased search term as the `employees` records source
 * searches: the name, position or e-mail. The document number is left out on purpose: its row
 * does not show it (it stays behind employees.get), so it is not searched there either.
 */
export function employeeRowMatches(e: EmployeeDoc, needle: string): boolean {
  return e.name_lc.includes(needle) || containsText(e.position, needle) || containsText(e.email, needle);
}
