import { CuadraError, DATE_SCHEMA, defineTool, localDate, MONEY_LIMIT, newId, recordOutput, repeatableId, insertOrStored } from '@cuadra/shared';
import { postableAccount } from '../../../accounting/chart.ts';
import { ledgerHorizon } from '../../../books/general-ledger.ts';
import { assertPeriodOpen } from '../../../books/periods.ts';
import type { JournalLine } from '../../../books/journal.ts';
import { workspaceCurrency } from '../../../lib/settings.ts';
import { CODE_SCHEMA } from '../../accounts/model.ts';
import { checkTags, LINE_TAGS_SCHEMA } from '../../dimensions/model.ts';
import { MANUAL_ENTRY_VIEW_SCHEMA, manualEntries, manualEntryView, type ManualEntryDoc } from '../manual.ts';

const SIDE = { type: 'integer', minimum: 0, maximum: 1e15 } as const;

/** Dimension tags of a line: `{dimension key: tag}`, cost center first (`cost_center`). */
export const TAGS_SCHEMA = LINE_TAGS_SCHEMA;

/** Writes a manual journal entry as a draft, checked and balanced. */
export const create = defineTool({
  name: 'journal.create',
  description: 'Write a manual journal entry as a draft (post it with journal.post): a date, a memo and 2 to 200 lines, each a debit or a credit in cents on an active account of the chart of four digits or more, with optional dimension tags (cost_center…). Σ debits must equal Σ credits in the entry\'s currency; the date must be in an open period.',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['date', 'memo', 'lines'],
    properties: {
      date: DATE_SCHEMA,
      currency: { type: 'string', pattern: '^[A-Z]{3}$' },
      memo: { type: 'string', minLength: 1, maxLength: 500 },
      lines: {
        type: 'array', minItems: 2, maxItems: 200,
        items: {
          type: 'object', additionalProperties: false, required: ['account'],
          properties: { account: CODE_SCHEMA, debit: SIDE, credit: SIDE, party_id: { type: 'string', pattern: '^pty_[A-Za-z0-9_-]{1,40}$' }, tags: TAGS_SCHEMA },
        },
      },
    },
  },
  output: recordOutput('entry', MANUAL_ENTRY_VIEW_SCHEMA),
  async handler(input, ctx) {
    const today = localDate(ctx.now);
    if (input.date.slice(0, 7) > ledgerHorizon(today, today)) throw new CuadraError('invalid_input', 'A journal entry is dated at most three years ahead.', { field: '/date' });
    const lines: JournalLine[] = [];
    let debit = 0;
    let credit = 0;
    for (const [i, l] of input.lines.entries()) {
      const d = l.debit ?? 0;
      const c = l.credit ?? 0;
      if (d > 0 && c > 0) throw new CuadraError('invalid_input', `Line ${i} has both a debit and a credit; a line is one or the other.`, { field: `/lines/${i}/credit` });
      if (d === 0 && c === 0) throw new CuadraError('invalid_input', `Line ${i} has neither a debit nor a credit.`, { field: `/lines/${i}` });
      const account = await postableAccount(ctx.db, ctx.workspace, l.account, `/lines/${i}/account`);
      if (l.tags) await checkTags(ctx.db, ctx.workspace, l.tags, `/lines/${i}/tags`);
      debit += d;
      credit += c;
      if (debit > MONEY_LIMIT || credit > MONEY_LIMIT) throw new CuadraError('invalid_input', `The entry's total passes 10^15 cents at line ${i}.`, { field: `/lines/${i}` });
      lines.push({ account: account.code, name: account.name, debit: d, credit: c, party_id: l.party_id ?? null, ...(l.tags && Object.keys(l.tags).length ? { tags: { ...l.tags } } : {}) });
    }
    if (debit !== credit) {
      const last = input.lines.length - 1;
      throw new CuadraError('invalid_input', `The entry does not balance: debits ${debit}, credits ${credit} (difference ${debit - credit} cents). Adjust the lines, e.g. line ${last}.`, { field: `/lines/${last}` });
    }
    await assertPeriodOpen(ctx.db, ctx.workspace, input.date);
    const currency = input.currency ?? await workspaceCurrency(ctx.db, ctx.workspace);
    const doc: ManualEntryDoc = {
      // The same id in every attempt of a call that can run again (repeatableId, runs.ts): a dead attempt's entry the store applies late is this one.
      _id: repeatableId('mje') ?? newId('mje'), workspace: ctx.workspace, status: 'draft', date: input.date, currency, memo: input.memo, lines,
      journal_entry_id: null, reversal_entry_id: null, created_at: ctx.now, posted_at: null, reversed_at: null, updated_at: ctx.now,
    };
    // Its id taken: the entry an earlier attempt of this call wrote, answered as it is.
    return { entry: manualEntryView(await insertOrStored(() => manualEntries(ctx.db).create(doc), manualEntries(ctx.db), doc, ctx.workspace)) };
  },
});
