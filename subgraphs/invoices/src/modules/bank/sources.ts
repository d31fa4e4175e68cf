import { CuadraError, defineSource, listNewestFirst, type SourceReader } from '@cuadra/shared';
import {
  bankAccountMatches, bankAccounts, bankTransactions, categorizationRules, ruleMatches, type RuleDoc, maskedNumber, TRANSACTION_STATUSES, transactionKind, transactionMatches, type BankAccountDoc, type BankTransactionDoc,
} from './model.ts';

/** records.list `banks`: status is ignored (specification §2.5), no kinds; search over name and bank name. */
export const banksSource = defineSource<BankAccountDoc>({
  model: bankAccounts,
  search: bankAccountMatches,
  row: (a) => ({ id: a._id, name: a.name, bank_name: a.bank_name, account_number: maskedNumber(a.account_number), currency: a.currency, puc_account: a.puc_account, opening_balance: a.opening_balance }),
});

/** The compact row of a bank transaction in records.list. */
function transactionRow(t: BankTransactionDoc) {
  return {
    id: t._id, bank_id: t.bank_id, kind: transactionKind(t), status: t.status, date: t.date, amount: t.amount, currency: t.currency,
    description: t.description, reference: t.reference, statement_id: t.statement_id,
  };
}

/** Status words of the source; `unmatched` (the specification's example) is a synonym of `unreconciled`. */
const TRANSACTION_SOURCE_STATUSES = [...TRANSACTION_STATUSES, 'unmatched'] as const;

/**
 * records.list `bank_transactions`: newest first, one bounded page by cursor (CONTRACT §9); kind
 * credit|debit, status unreconciled (or unmatched)|reconciling|reconciled, search over
 * description and reference, `ref` = a bank account id of the workspace. The filters test the
 * documents of the page's buckets in memory (at most ~1,000 positions a page, then next_cursor).
 */
export const bankTransactionsSource: SourceReader = async (q, ctx) => {
  const tests: ((t: BankTransactionDoc) => boolean)[] = [];
  if (q.kind) {
    if (q.kind !== 'credit' && q.kind !== 'debit') throw new CuadraError('invalid_input', `"${q.kind}" is not a kind of bank_transactions (credit, debit).`, { field: '/kind' });
    const kind = q.kind;
    tests.push((t) => transactionKind(t) === kind);
  }
  if (q.status) {
    if (!(TRANSACTION_SOURCE_STATUSES as readonly string[]).includes(q.status)) {
      throw new CuadraError('invalid_input', `"${q.status}" is not a status of bank_transactions (${TRANSACTION_SOURCE_STATUSES.join(', ')}).`, { field: '/status' });
    }
    const status = q.status === 'unmatched' ? 'unreconciled' : q.status;
    tests.push((t) => t.status === status);
  }
  if (q.ref !== undefined) {
    const account = await bankAccounts(ctx.db).findOne({ _id: q.ref, workspace: ctx.workspace }, { _id: 1 }).lean();
    if (!account) throw new CuadraError('invalid_input', `No bank account ${q.ref} exists in this workspace.`, { field: '/ref' });
    tests.push((t) => t.bank_id === q.ref);
  }
  const text = q.search?.toLowerCase();
  if (text) tests.push((t) => transactionMatches(t, text));
  const limit = Math.min(Math.max(Math.trunc(q.limit ?? 8), 1), 100);
  return listNewestFirst<BankTransactionDoc, Record<string, unknown>>(
    bankTransactions(ctx.db), { workspace: ctx.workspace, cursor: q.cursor, limit, match: tests.length ? (t) => tests.every((f) => f(t)) : undefined }, transactionRow,
  );
};

/** records.list `categorization_rules`: newest first, search over name and description test; kind = what a rule proposes (counterparty, account). */
export const categorizationRulesSource: SourceReader = async (q, ctx) => {
  if (q.kind && q.kind !== 'counterparty' && q.kind !== 'account') {
    throw new CuadraError('invalid_input', `"${q.kind}" is not a kind of categorization_rules (counterparty, account).`, { field: '/kind' });
  }
  const text = q.search?.toLowerCase();
  const kind = q.kind;
  const tests: ((r: RuleDoc) => boolean)[] = [];
  if (kind) tests.push((r) => r.propose.kind === kind);
  if (text) tests.push((r) => ruleMatches(r, text));
  const limit = Math.min(Math.max(Math.trunc(q.limit ?? 8), 1), 100);
  return listNewestFirst<RuleDoc, Record<string, unknown>>(
    categorizationRules(ctx.db), { workspace: ctx.workspace, cursor: q.cursor, limit, match: tests.length ? (r) => tests.every((f) => f(r)) : undefined },
    (r) => ({ id: r._id, name: r.name, kind: r.propose.kind, account_code: r.propose.kind === 'account' ? r.propose.account_code : null, bank_id: r.bank_id, description_contains: r.description_contains, sign: r.sign }),
  );
};
