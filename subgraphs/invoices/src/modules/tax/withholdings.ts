import { AMOUNT_SCHEMA } from '@cuadra/shared';
import type { Connection } from 'mongoose';
import { withholdingAccount } from '../../accounting/accounts.ts';
import { ledgerBetween } from '../../books/general-ledger.ts';
import { FORM_350_ROWS, uvtOf, withholdingConcept, withholdingCurrency, WITHHOLDING_CONCEPT_KEYS, type Form350Row } from '../../accounting/withholdings.ts';
import { LedgerCounter, rollupId, type RollupDoc } from '../../books/rollup-store.ts';
import { rollupsByIds } from '../../books/rollup-reads.ts';
import { endOfMonth } from '../../books/calendar.ts';
import { PAYABLE_ACCOUNTS, withholdingPayableAccount } from '../../accounting/payable-accounts.ts';

type Type = 'retefuente' | 'reteiva' | 'reteica';

/** One withholding total of the month, by type and concept. */
export interface WithholdingTotal {
  type: Type;
  /** Retención en la fuente's concept; null for ReteIVA and ReteICA, and for withholdings recorded before concepts existed. */
  concept: string | null;
  name: string;
  account: string;
  base: number;
  amount: number;
}

/** A row of Formulario 350's renta section: the month's base and withholding, exact and as declared. */
export interface Form350Line {
  row: Form350Row;
  label: string;
  base: number;
  withheld: number;
  /** Amounts as the form takes them: to the nearest thousand pesos (art. 577 E.T.), in centavos. */
  declared: { base: number; withheld: number };
  /** The row's 2365 sub-accounts, and their net credit in the month as the journal has it. */
  accounts: string[];
  booked: number;
}

/** The month's withholdings, and the figures of its Formulario 350. */
export interface MonthWithholdings {
  month: string;
  currency: string;
  uvt: { year: number; value: number };
  practiced: WithholdingTotal[];
  suffered: WithholdingTotal[];
  form_350: {
    renta: Form350Line[];
    renta_total: { withheld: number; declared: number };
    iva: { label: string; withheld: number; declared: number; account: string; booked: number };
    total: { withheld: number; declared: number };
  };
}

/** Centavos to the nearest thousand pesos (art. 577 E.T.: «aproximarse al múltiplo de mil (1.000) más cercano»), half up. */
export function declared(cents: number): number {
  return Math.floor((cents + 50_000) / 100_000) * 100_000;
}

function totalsOf(side: 'p' | 's', v: Record<string, number>): WithholdingTotal[] {
  const out = new Map<string, WithholdingTotal>();
  for (const [key, value] of Object.entries(v)) {
    const [s, type, concept, what] = key.split('|');
    if (s !== side || !what) continue;
    const id = `${type}|${concept}`;
    let t = out.get(id);
    if (!t) {
      const c = withholdingConcept(concept);
      const w = { type: type as Type, ...(c ? { concept } : {}) };
      const account = side === 'p' ? withholdingPayableAccount(w) : withholdingAccount(w);
      t = { type: type as Type, concept: c ? concept : null, name: c?.name ?? { retefuente: 'Retención en la fuente', reteiva: 'Retención de IVA', reteica: 'Retención de ICA' }[type as Type], account: account.code, base: 0, amount: 0 };
      out.set(id, t);
    }
    if (what === 'b') t.base += value;
    else t.amount += value;
  }
  const order = (t: WithholdingTotal) => `${['retefuente', 'reteiva', 'reteica'].indexOf(t.type)}|${t.concept ? String(WITHHOLDING_CONCEPT_KEYS.indexOf(t.concept as never)).padStart(2, '0') : '99'}`;
  return [...out.values()].filter((t) => t.base !== 0 || t.amount !== 0).sort((a, b) => order(a).localeCompare(order(b)));
}

/**
 * The withholdings of a month, from the counters its documents' postings keep (bills: practiced;
 * invoices and credit notes: suffered; credit notes take theirs back), and the Formulario 350 they
 * make: per renta row the base and the amount withheld, ReteIVA practiced, the totals, each as
 * declared. Beside each row, what the journal booked to its accounts in the month: a manual entry
 * to 2365 shows there, not in the documents' figures, so a difference is visible.
 */
export async function monthWithholdings(db: Connection, workspace: string, currency: string, month: string): Promise<MonthWithholdings> {
  const [doc] = await rollupsByIds(db, [rollupId(workspace, withholdingCurrency(currency), 'm', month)]) as (RollupDoc | undefined)[];
  const v = (doc?.v ?? {}) as Record<string, number>;
  const [ledger] = await ledgerBetween(db, workspace, currency, [{ from: `${month}-01`, to: endOfMonth(`${month}-01`) }]);
  const booked = (code: string) => (ledger[LedgerCounter.credit(code)] ?? 0) - (ledger[LedgerCounter.debit(code)] ?? 0);
  const practiced = totalsOf('p', v);
  const renta = FORM_350_ROWS.map(({ row, label }) => {
    // Withholdings recorded before concepts were booked to 236540 (compras): they are declared there.
    const mine = practiced.filter((t) => t.type === 'retefuente' && (withholdingConcept(t.concept)?.form_350 ?? 'compras') === row);
    const base = mine.reduce((s, t) => s + t.base, 0);
    const withheld = mine.reduce((s, t) => s + t.amount, 0);
    const accounts = [...new Set([...mine.map((t) => t.account), ...FORM_350_ACCOUNTS[row]])].sort();
    return { row, label, base, withheld, declared: { base: declared(base), withheld: declared(withheld) }, accounts, booked: accounts.reduce((s, a) => s + booked(a), 0) };
  });
  const iva = practiced.filter((t) => t.type === 'reteiva').reduce((s, t) => s + t.amount, 0);
  const rentaTotal = { withheld: renta.reduce((s, r) => s + r.withheld, 0), declared: renta.reduce((s, r) => s + r.declared.withheld, 0) };
  return {
    month, currency, uvt: uvtOf(`${month}-01`), practiced, suffered: totalsOf('s', v),
    form_350: {
      renta, renta_total: rentaTotal,
      iva: { label: 'Retenciones de IVA practicadas a responsables del IVA', withheld: iva, declared: declared(iva), account: PAYABLE_ACCOUNTS.withholdingVat.code, booked: booked(PAYABLE_ACCOUNTS.withholdingVat.code) },
      total: { withheld: rentaTotal.withheld + iva, declared: rentaTotal.declared + declared(iva) },
    },
  };
}

/** The 2365 sub-accounts of each Formulario 350 row (from the concepts' table; 236540 also holds withholdings recorded before concepts). */
const FORM_350_ACCOUNTS: Record<Form350Row, string[]> = Object.fromEntries(FORM_350_ROWS.map(({ row }) => [
  row, [...new Set(WITHHOLDING_CONCEPT_KEYS.map((k) => withholdingConcept(k)!).filter((c) => c.form_350 === row).map((c) => c.payable.code))],
])) as Record<Form350Row, string[]>;

const TOTAL_SCHEMA = {
  type: 'object', additionalProperties: false, required: ['type', 'concept', 'name', 'account', 'base', 'amount'],
  properties: { type: { enum: ['retefuente', 'reteiva', 'reteica'] }, concept: { type: ['string', 'null'] }, name: { type: 'string' }, account: { type: 'string' }, base: AMOUNT_SCHEMA, amount: AMOUNT_SCHEMA },
} as const;
const DECLARED = { type: 'object', additionalProperties: false, required: ['withheld', 'declared'], properties: { withheld: AMOUNT_SCHEMA, declared: AMOUNT_SCHEMA } } as const;

/** JSON Schema of {@link MonthWithholdings}. */
export const MONTH_WITHHOLDINGS_SCHEMA = {
  type: 'object', additionalProperties: false, required: ['month', 'currency', 'uvt', 'practiced', 'suffered', 'form_350'],
  properties: {
    month: { type: 'string' }, currency: { type: 'string' },
    uvt: { type: 'object', additionalProperties: false, required: ['year', 'value'], properties: { year: { type: 'integer' }, value: { type: 'integer' } } },
    practiced: { type: 'array', items: TOTAL_SCHEMA },
    suffered: { type: 'array', items: TOTAL_SCHEMA },
    form_350: {
      type: 'object', additionalProperties: false, required: ['renta', 'renta_total', 'iva', 'total'],
      properties: {
        renta: {
          type: 'array',
          items: {
            type: 'object', additionalProperties: false, required: ['row', 'label', 'base', 'withheld', 'declared', 'accounts', 'booked'],
            properties: {
              row: { enum: FORM_350_ROWS.map((r) => r.row) }, label: { type: 'string' }, base: AMOUNT_SCHEMA, withheld: AMOUNT_SCHEMA,
              declared: { type: 'object', additionalProperties: false, required: ['base', 'withheld'], properties: { base: AMOUNT_SCHEMA, withheld: AMOUNT_SCHEMA } },
              accounts: { type: 'array', items: { type: 'string' } }, booked: AMOUNT_SCHEMA,
            },
          },
        },
        renta_total: DECLARED,
        iva: {
          type: 'object', additionalProperties: false, required: ['label', 'withheld', 'declared', 'account', 'booked'],
          properties: { label: { type: 'string' }, withheld: AMOUNT_SCHEMA, declared: AMOUNT_SCHEMA, account: { type: 'string' }, booked: AMOUNT_SCHEMA },
        },
        total: DECLARED,
      },
    },
  },
} as const;
