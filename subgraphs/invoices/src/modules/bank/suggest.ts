import type { ToolContext } from '@cuadra/shared';
import { bills } from '../bills/model.ts';
import { invoices } from '../invoices/model.ts';
import { categorizationRules, ruleApplies, transactionKind, type BankTransactionDoc, type RuleDoc } from './model.ts';

/** Open documents read per suggestion call (documented bound: the oldest-due first beyond it are not proposed). */
export const OPEN_DOCUMENTS_READ = 500;
/** Rules read per suggestion call, newest first. */
export const RULES_READ = 200;

export interface Proposal {
  kind: 'invoice' | 'bill' | 'account';
  id: string;
  label: string;
  amount: number;
  reason: 'reference' | 'amount' | 'rule';
  rule_id: string | null;
}

interface OpenDoc { id: string; number: string; balance: number; currency: string; due_date: string }

/** Reads what suggestions need once per call: the rules and the open invoices and bills (bounded). */
export async function suggestionContext(ctx: Pick<ToolContext, 'db' | 'workspace'>) {
  const rules = await categorizationRules(ctx.db).find({ workspace: ctx.workspace }).sort({ pos: -1 }).limit(RULES_READ).lean();
  const openInvoices: OpenDoc[] = (await invoices(ctx.db).find({ workspace: ctx.workspace, kind: 'invoice', status: { $in: ['posted', 'partially_paid'] } }).limit(OPEN_DOCUMENTS_READ).lean())
    .map((i) => ({ id: i._id, number: i.number ?? i._id, balance: i.balance, currency: i.currency, due_date: i.due_date }));
  const openBills: OpenDoc[] = (await bills(ctx.db).find({ workspace: ctx.workspace, status: { $in: ['posted', 'partially_paid'] } }).limit(OPEN_DOCUMENTS_READ).lean())
    .map((b) => ({ id: b._id, number: b.supplier_number, balance: b.balance, currency: b.currency, due_date: b.due_date }));
  const byDue = (a: OpenDoc, b: OpenDoc) => a.due_date.localeCompare(b.due_date) || a.id.localeCompare(b.id);
  openInvoices.sort(byDue);
  openBills.sort(byDue);
  return { rules, openInvoices, openBills };
}

/**
 * The proposals for one transaction, best first: (1) an open invoice (money in) or bill (money
 * out) whose number appears in the reference or description, for what it has open up to the
 * transaction; (2) the first rule (newest first) that applies: an account code, or for a
 * counterparty rule the open document whose balance equals the amount (oldest due first).
 */
export function proposalsFor(t: BankTransactionDoc, c: { rules: RuleDoc[]; openInvoices: OpenDoc[]; openBills: OpenDoc[] }): Proposal[] {
  const kind = transactionKind(t);
  const abs = Math.abs(t.amount);
  const docs = (kind === 'credit' ? c.openInvoices : c.openBills).filter((d) => d.currency === t.currency);
  const docKind = kind === 'credit' ? 'invoice' as const : 'bill' as const;
  const text = `${t.reference ?? ''} ${t.description}`.toUpperCase();
  const out: Proposal[] = [];
  for (const d of docs) {
    if (d.number && text.includes(d.number.toUpperCase())) out.push({ kind: docKind, id: d.id, label: d.number, amount: Math.min(d.balance, abs), reason: 'reference', rule_id: null });
  }
  const rule = c.rules.find((r) => ruleApplies(r, t));
  if (rule?.propose.kind === 'account') {
    out.push({ kind: 'account', id: rule.propose.account_code, label: rule.name, amount: abs, reason: 'rule', rule_id: rule._id });
  } else if (rule) {
    const same = docs.find((d) => d.balance === abs && !out.some((p) => p.id === d.id));
    if (same) out.push({ kind: docKind, id: same.id, label: same.number, amount: abs, reason: 'rule', rule_id: rule._id });
  }
  return out;
}
