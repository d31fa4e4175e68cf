import { CuadraError } from '@cuadra/shared';
import { Schema, type Connection, type Model } from 'mongoose';
import { ACCOUNTS } from './accounts.ts';
import { accountType, levelOf, normalBalance, parentCode, PUC, type AccountType } from './puc.ts';
import { PAYABLE_ACCOUNTS, BILL_LINE_ACCOUNTS, PAYMENT_BANK_ACCOUNTS } from './payable-accounts.ts';
import { WITHHOLDING_CONCEPTS } from './withholdings.ts';

/**
 * A workspace's own change to its chart: a sub-account it opened (`default: false`), or a PUC
 * account it archived (`default: true`, only `status` is its own). The PUC itself is data in
 * code (puc.ts), never copied per workspace.
 */
export interface AccountDoc {
  /** `<workspace>|<code>`: read by `_id`, and unique per workspace by construction. */
  _id: string;
  workspace: string;
  code: string;
  name: string;
  default: boolean;
  status: 'active' | 'archived';
  created_at: Date;
  updated_at: Date;
}

const accountSchema = new Schema<AccountDoc>(
  {
    _id: { type: String, required: true },
    workspace: { type: String, required: true },
    code: { type: String, required: true },
    name: { type: String, required: true },
    default: { type: Boolean, required: true },
    status: { type: String, required: true },
    created_at: { type: Date, required: true },
    updated_at: { type: Date, required: true },
  },
  { versionKey: false },
);
accountSchema.index({ workspace: 1 });

/** The workspace accounts collection (sub-accounts and archived PUC accounts). */
export function workspaceAccounts(db: Connection): Model<AccountDoc> {
  return (db.models.Account as Model<AccountDoc> | undefined) ?? db.model<AccountDoc>('Account', accountSchema, 'accounts');
}

/** Id of a workspace's account document. */
export function accountId(workspace: string, code: string): string {
  return `${workspace}|${code}`;
}

/**
 * Most sub-accounts a workspace may open. It bounds every read of the chart: a list reads the
 * PUC (in memory) and at most this many documents of the workspace.
 */
export const MAX_WORKSPACE_ACCOUNTS = 2000;

/** An account of a workspace's chart, as tools answer it. */
export interface ChartAccount {
  code: string;
  name: string;
  class: string;
  level: ReturnType<typeof levelOf>;
  parent: string | null;
  type: AccountType;
  normal_balance: 'debit' | 'credit';
  /** True for a PUC account, false for one the workspace opened. */
  default: boolean;
  status: 'active' | 'archived';
  /** True when the automatic postings (invoices, payments, bills) write to it: it cannot be archived. */
  system: boolean;
}

/** JSON Schema of {@link ChartAccount}. */
export const ACCOUNT_VIEW_SCHEMA = {
  type: 'object', additionalProperties: false,
  required: ['code', 'name', 'class', 'level', 'parent', 'type', 'normal_balance', 'default', 'status', 'system'],
  properties: {
    code: { type: 'string' }, name: { type: 'string' }, class: { type: 'string' },
    level: { enum: ['class', 'group', 'account', 'subaccount', 'auxiliary'] }, parent: { type: ['string', 'null'] },
    type: { enum: ['asset', 'liability', 'equity', 'income', 'expense', 'cost'] }, normal_balance: { enum: ['debit', 'credit'] },
    default: { type: 'boolean' }, status: { enum: ['active', 'archived'] }, system: { type: 'boolean' },
  },
} as const;

/** Every code an automatic posting writes to (and the year-end close's result accounts). */
export const SYSTEM_ACCOUNTS: ReadonlySet<string> = new Set([
  ...Object.values(ACCOUNTS).map((a) => a.code),
  ...Object.values(PAYABLE_ACCOUNTS).map((a) => a.code),
  ...Object.keys(BILL_LINE_ACCOUNTS),
  ...Object.keys(PAYMENT_BANK_ACCOUNTS),
  ...Object.values(WITHHOLDING_CONCEPTS).flatMap((c) => [c.payable.code, c.receivable.code]),
  '3605', '3610',
]);

/** An account of the chart from its code, its PUC name or the workspace's document. */
export function chartAccount(code: string, doc: AccountDoc | null): ChartAccount | null {
  const name = doc && !doc.default ? doc.name : PUC[code];
  if (name === undefined) return null;
  return {
    code, name, class: code[0], level: levelOf(code), parent: parentCode(code), type: accountType(code), normal_balance: normalBalance(code),
    default: Object.hasOwn(PUC, code), status: doc?.status ?? 'active', system: SYSTEM_ACCOUNTS.has(code),
  };
}

/** One account of the workspace's chart, or null. */
export async function findAccount(db: Connection, workspace: string, code: string): Promise<ChartAccount | null> {
  return chartAccount(code, await workspaceAccounts(db).findById(accountId(workspace, code)).lean());
}

/** The workspace's whole chart (the PUC with its changes), by code. Bounded by {@link MAX_WORKSPACE_ACCOUNTS}. */
export async function wholeChart(db: Connection, workspace: string): Promise<ChartAccount[]> {
  const docs = new Map((await workspaceAccounts(db).find({ workspace }).limit(MAX_WORKSPACE_ACCOUNTS + Object.keys(PUC).length).lean()).map((d) => [d.code, d]));
  const codes = new Set([...Object.keys(PUC), ...docs.keys()]);
  return [...codes].sort().map((c) => chartAccount(c, docs.get(c) ?? null)).filter((a): a is ChartAccount => a !== null);
}

/**
 * The account a journal line may post to: it exists in the workspace's chart, is active, and is
 * an account or below (classes and groups only total). Refused `invalid_input` at `field`.
 */
export async function postableAccount(db: Connection, workspace: string, code: string, field: string): Promise<ChartAccount> {
  const account = await findAccount(db, workspace, code);
  if (!account) throw new CuadraError('invalid_input', `There is no account ${code} in this workspace's chart of accounts.`, { field });
  if (account.status !== 'active') throw new CuadraError('invalid_input', `Account ${code} (${account.name}) is archived; nothing can be posted to it.`, { field });
  if (account.level === 'class' || account.level === 'group') throw new CuadraError('invalid_input', `${code} is a PUC ${account.level}; post to an account (four digits) or below.`, { field });
  return account;
}

/**
 * Opens in the workspace's chart each account a posting from another service names that the chart
 * lacks (payroll's journal feed books to sub-accounts of its own), with the name the posting gives
 * it, so every statement names it. Idempotent (`$setOnInsert` on the account's `_id`); an account the
 * workspace already has keeps its own name. Past {@link MAX_WORKSPACE_ACCOUNTS} nothing is opened and
 * the code shows bare, as before.
 */
export async function openPostedAccounts(db: Connection, workspace: string, lines: readonly { account: string; name: string }[], now: Date): Promise<void> {
  const missing = new Map<string, string>();
  for (const l of lines) if (!Object.hasOwn(PUC, l.account) && !missing.has(l.account)) missing.set(l.account, l.name);
  if (missing.size === 0) return;
  const model = workspaceAccounts(db);
  const held = new Set((await model.find({ _id: { $in: [...missing.keys()].map((c) => accountId(workspace, c)) } }, { code: 1 }).lean()).map((d) => d.code));
  const toOpen = [...missing].filter(([code]) => !held.has(code));
  if (toOpen.length === 0) return;
  if (await model.countDocuments({ workspace }) + toOpen.length > MAX_WORKSPACE_ACCOUNTS) return;
  for (const [code, name] of toOpen) {
    const doc = { workspace, code, name: (name.trim() || code).slice(0, 120), default: false, status: 'active', created_at: now, updated_at: now };
    // Two pulls at once: the second upsert's insert collides on `_id`, and the account is there.
    await model.updateOne({ _id: accountId(workspace, code) }, { $setOnInsert: doc }, { upsert: true }).catch((err: { code?: number }) => { if (err.code !== 11000) throw err; });
  }
}

/** The chart's names of some codes (one read per workspace account; PUC names from memory). Codes the chart lacks are left out. */
export async function accountNames(db: Connection, workspace: string, codes: readonly string[]): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const code of new Set(codes)) {
    const account = await findAccount(db, workspace, code);
    if (account) out[code] = account.name;
  }
  return out;
}
