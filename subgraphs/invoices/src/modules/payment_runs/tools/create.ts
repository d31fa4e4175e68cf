import { createPositioned, CuadraError, DATE_SCHEMA, defineTool, ID_SCHEMA, localDate, newId, recordOutput, sumAmounts } from '@cuadra/shared';
import { bills, type BillDoc } from '../../bills/model.ts';
import { PAYMENT_RUN_VIEW_SCHEMA, paymentRuns, paymentRunView, type PayeeRef, type PaymentRunDoc, type PaymentRunLine } from '../model.ts';
import { claimBill, releaseClaims } from '../ops.ts';

/** Most bills one run pays (one bank file): bounded so a run is one document and one file. */
export const MAX_RUN_BILLS = 500;

/** A bank account as callers give it. */
const ACCOUNT_FIELDS = {
  account_number: { type: 'string', pattern: '^[A-Za-z0-9]{1,34}$', description: 'The account number (digits for Colombian banks).' },
  account_type: { enum: ['savings', 'checking'] },
  iban: { type: 'string', pattern: '^[A-Z]{2}[0-9]{2}[A-Z0-9]{1,30}$', description: 'IBAN, where the country has them (used in pain.001 instead of the account number).' },
  bic: { type: 'string', pattern: '^[A-Z]{6}[A-Z2-9][A-NP-Z0-9]([A-Z0-9]{3})?$', description: 'The bank\'s BIC (SWIFT code).' },
  bank_code: { type: 'string', pattern: '^[0-9]{1,9}$', description: 'The bank\'s national code (for a Bancolombia PAB file, the destination bank\'s code in Bancolombia\'s table, up to 9 digits).' },
} as const;

const INPUT = {
  type: 'object', additionalProperties: false, required: ['currency', 'bank_account', 'debtor', 'payees'],
  properties: {
    currency: { type: 'string', pattern: '^[A-Z]{3}$' },
    bank_account: { enum: ['111005', '111010'], description: 'PUC bank account the money leaves from: 111005 moneda nacional, 111010 moneda extranjera.' },
    due_by: { ...DATE_SCHEMA, description: 'Pick every posted or partially paid bill in the currency due on or before this date (not held by another open run).' },
    bill_ids: { type: 'array', minItems: 1, maxItems: MAX_RUN_BILLS, items: ID_SCHEMA, description: 'Or name the bills to pay.' },
    payment_date: { ...DATE_SCHEMA, description: 'Requested execution date (default today).' },
    debtor: {
      type: 'object', additionalProperties: false, required: ['name', 'tax_id', 'account_number', 'account_type'],
      description: 'The workspace as its bank knows it: legal name, NIT (digits) and the account debited.',
      properties: { name: { type: 'string', minLength: 1, maxLength: 140 }, tax_id: { type: 'string', pattern: '^[0-9]{1,15}$' }, ...ACCOUNT_FIELDS },
    },
    payees: {
      type: 'array', minItems: 1, maxItems: MAX_RUN_BILLS,
      description: 'The bank account of each vendor paid (crm keeps no bank details).',
      items: { type: 'object', additionalProperties: false, required: ['vendor_id', 'account_number', 'account_type'], properties: { vendor_id: ID_SCHEMA, ...ACCOUNT_FIELDS } },
    },
  },
} as const;

/** The bills a run picks: named ones (refused if not payable or held), or every unheld one due by a date. */
async function pickBills(input: { currency: string; due_by?: string; bill_ids?: readonly string[] }, ctx: Parameters<typeof claimBill>[0]): Promise<BillDoc[]> {
  if (input.bill_ids) {
    const seen = new Set<string>();
    input.bill_ids.forEach((id, i) => {
      if (seen.has(id)) throw new CuadraError('invalid_input', 'A bill is named twice.', { field: `/bill_ids/${i}` });
      seen.add(id);
    });
    const found = new Map((await bills(ctx.db).find({ _id: { $in: [...input.bill_ids] }, workspace: ctx.workspace }).lean()).map((b) => [b._id, b]));
    return input.bill_ids.map((id, i) => {
      const bill = found.get(id);
      if (!bill) throw new CuadraError('not_found', `No bill ${id} exists in this workspace.`);
      if (bill.currency !== input.currency) throw new CuadraError('invalid_input', `Bill ${bill.supplier_number} is in ${bill.currency}, not ${input.currency}.`, { field: `/bill_ids/${i}` });
      if ((bill.status !== 'posted' && bill.status !== 'partially_paid') || bill.balance <= 0) {
        throw new CuadraError('conflict', `Bill ${bill.supplier_number} is ${bill.status}; a run pays posted or partially paid bills.`);
      }
      return bill;
    });
  }
  if (!input.due_by) throw new CuadraError('invalid_input', 'Give due_by (pick the bills due by a date) or bill_ids (name them).', { field: '' });
  const due = await bills(ctx.db)
    .find({ workspace: ctx.workspace, status: { $in: ['posted', 'partially_paid'] }, currency: input.currency, due_date: { $lte: input.due_by } })
    .sort({ due_date: 1, _id: 1 }).limit(MAX_RUN_BILLS * 2).lean();
  return due.filter((b) => b.balance > 0);
}

/**
 * Makes a draft payment run: picks the bills, holds each for this run (a bill is in one open run
 * at a time), and records what each one owes now. The payment ids are chosen here, so confirming
 * the run, however often, pays each bill once.
 */
export const create = defineTool({
  name: 'payment_runs.create',
  description: 'Make a draft payment run in one currency from one bank account (PUC 111005/111010): every posted or partially paid bill due by a date (due_by), or the bills named (bill_ids), each for its open balance. Give the workspace\'s bank account (debtor) and each vendor\'s account (payees). Nothing is sent: approve, export the bank file, then confirm once the bank has paid.',
  risk: 'write',
  input: INPUT,
  output: recordOutput('payment_run', PAYMENT_RUN_VIEW_SCHEMA),
  async handler(input, ctx) {
    if (input.bill_ids && input.due_by) throw new CuadraError('invalid_input', 'Give due_by or bill_ids, not both.', { field: '/bill_ids' });
    const runId = newId('prun');
    const picked = await pickBills(input, ctx);
    const payees = new Map<string, PayeeRef>();
    input.payees.forEach((p, i) => {
      if (payees.has(p.vendor_id)) throw new CuadraError('invalid_input', 'A vendor is given two accounts.', { field: `/payees/${i}/vendor_id` });
      payees.set(p.vendor_id, { vendor_id: p.vendor_id, account_number: p.account_number, account_type: p.account_type, iban: p.iban ?? null, bic: p.bic ?? null, bank_code: p.bank_code ?? null });
    });
    const held: BillDoc[] = [];
    try {
      for (const bill of picked) {
        if (held.length === MAX_RUN_BILLS) break;
        if (await claimBill(ctx, bill._id, runId)) held.push(bill);
        else if (input.bill_ids) throw new CuadraError('conflict', `Bill ${bill.supplier_number} is already in another open payment run.`);
      }
      if (!held.length) throw new CuadraError('invalid_input', `No posted bill in ${input.currency} is due by ${input.due_by} and free of other runs.`, { field: '/due_by' });
      const missing = held.find((b) => !payees.has(b.vendor_id));
      if (missing) throw new CuadraError('invalid_input', `No account is given for ${missing.vendor.name} (${missing.vendor_id}), whose bill ${missing.supplier_number} is in the run.`, { field: '/payees' });
      const lines: PaymentRunLine[] = held.map((b, i) => ({
        bill_id: b._id, supplier_number: b.supplier_number, vendor_id: b.vendor_id, vendor_name: b.vendor.name,
        vendor_tax_id: b.vendor.tax_id?.number.replace(/\D/g, '') || null, due_date: b.due_date, amount: b.balance, payment_id: `bpy_${runId}_${i + 1}`,
      }));
      const vendors = new Set(lines.map((l) => l.vendor_id));
      const doc: PaymentRunDoc = {
        _id: runId, workspace: ctx.workspace, status: 'draft', currency: input.currency, bank_account: input.bank_account,
        debtor: {
          name: input.debtor.name, tax_id: input.debtor.tax_id, account_number: input.debtor.account_number, account_type: input.debtor.account_type,
          iban: input.debtor.iban ?? null, bic: input.debtor.bic ?? null, bank_code: input.debtor.bank_code ?? null,
        },
        payees: [...payees.values()].filter((p) => vendors.has(p.vendor_id)), payment_date: input.payment_date ?? localDate(ctx.now), due_by: input.due_by ?? null,
        lines, total: sumAmounts(lines.map((l) => l.amount), () => '/bill_ids', 'The run total'), count: lines.length,
        search_lc: `${runId} ${[...new Set(lines.map((l) => l.vendor_name))].join(' ')}`.toLowerCase().slice(0, 2000),
        approved_by: null, approved_at: null, exported_at: null, exports: [], paid_on: null, confirmed_at: null, cancelled_at: null, created_at: ctx.now, updated_at: ctx.now,
      };
      await createPositioned(paymentRuns(ctx.db), doc);
      return { payment_run: paymentRunView(doc) };
    } catch (err) {
      await releaseClaims(ctx, { _id: runId, lines: held.map((b) => ({ bill_id: b._id })) as PaymentRunLine[] });
      throw err;
    }
  },
});
