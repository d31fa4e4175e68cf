import { createHash } from 'node:crypto';
import { CuadraError, defineTool, ID_SCHEMA, withLock } from '@cuadra/shared';
import { completeStuckImports, importStatement } from '../import.ts';
import { bankAccounts, normalAccountNumber, STATEMENT_FORMATS } from '../model.ts';
import { parseCamt053 } from '../statements/camt.ts';
import { parseCsv } from '../statements/csv.ts';
import { badFile, MAX_STATEMENT_ENTRIES, type ParsedStatement } from '../statements/entry.ts';
import { parseOfx } from '../statements/ofx.ts';

/** Largest statement file accepted, in characters. */
export const MAX_STATEMENT_CHARS = 1024 * 1024;

const COLUMN = { type: 'string', minLength: 1, maxLength: 100 } as const;

const INPUT = {
  type: 'object', additionalProperties: false, required: ['bank_id', 'format', 'content'],
  properties: {
    bank_id: ID_SCHEMA,
    format: { enum: STATEMENT_FORMATS, description: 'camt053 (ISO 20022 camt.053.001.02), ofx (OFX 1.x SGML or 2.x XML) or csv (with a column mapping).' },
    content: { type: 'string', minLength: 1, maxLength: MAX_STATEMENT_CHARS, description: 'The statement file as text (UTF-8), at most 1 MiB and 5,000 lines.' },
    statement_id: { type: 'string', minLength: 1, maxLength: 100, description: 'For CSV: the statement\'s own id (default: a hash of the file).' },
    csv: {
      type: 'object', additionalProperties: false, required: ['date', 'description'],
      description: 'For CSV: header names of the columns; one signed amount column, or debit and credit columns.',
      properties: {
        date: COLUMN, amount: COLUMN, debit: COLUMN, credit: COLUMN, description: COLUMN, reference: COLUMN, id: COLUMN,
        date_format: { enum: ['YYYY-MM-DD', 'DD/MM/YYYY', 'MM/DD/YYYY'] }, decimal_separator: { enum: ['.', ','] }, delimiter: { enum: [',', ';', '\t'] },
      },
    },
  },
} as const;

const OUTPUT = {
  type: 'object', additionalProperties: false, required: ['import'],
  properties: {
    import: {
      type: 'object', additionalProperties: false, required: ['id', 'bank_id', 'format', 'statement_id', 'file_sha256', 'entries', 'added', 'already_there', 'skipped'],
      properties: {
        id: { type: 'string' }, bank_id: { type: 'string' }, format: { enum: STATEMENT_FORMATS }, statement_id: { type: 'string' }, file_sha256: { type: 'string' },
        entries: { type: 'integer', minimum: 0 }, added: { type: 'integer', minimum: 0 }, already_there: { type: 'integer', minimum: 0 },
        skipped: { type: 'integer', minimum: 0, description: 'Lines of the file that are not booked (camt PDNG/INFO): not imported.' },
      },
    },
  },
} as const;

/**
 * Imports a bank statement into an account's transactions. Nothing is written until the whole
 * file has been read and checked (format, XSD for camt.053, account, currency, size); importing the
 * same statement again adds nothing and says how many lines were already there.
 */
export const importStatementTool = defineTool({
  name: 'bank.import_statement',
  description: 'Import a bank statement (ISO 20022 camt.053.001.02, OFX, or CSV with a column mapping) into a bank account\'s transactions, amounts signed in cents (+ credit, − debit). Duplicate imports change nothing: each line has a stable key (the bank\'s entry id, FITID, or a hash of the mapped fields); the answer says how many lines were new and how many already there.',
  risk: 'write',
  input: INPUT,
  output: OUTPUT,
  maxInputBytes: MAX_STATEMENT_CHARS + 64 * 1024,
  async handler(input, ctx) {
    const account = await bankAccounts(ctx.db).findOne({ _id: input.bank_id, workspace: ctx.workspace }).lean();
    if (!account) throw new CuadraError('not_found', `No bank account ${input.bank_id} exists in this workspace.`);
    if (input.format === 'csv' && !input.csv) throw new CuadraError('invalid_input', 'A CSV statement needs its column mapping.', { field: '/csv' });
    if (input.format !== 'csv' && input.csv) throw new CuadraError('invalid_input', 'A column mapping is for CSV statements only.', { field: '/csv' });
    const parsed: ParsedStatement = input.format === 'camt053' ? await parseCamt053(input.content)
      : input.format === 'ofx' ? parseOfx(input.content)
        : parseCsv(input.content, input.csv!, account.currency, input.statement_id);
    if (parsed.entries.length > MAX_STATEMENT_ENTRIES) throw badFile(`The statement holds ${parsed.entries.length} lines; at most ${MAX_STATEMENT_ENTRIES} are imported at once.`);
    if (parsed.account && normalAccountNumber(parsed.account) !== account.account_number) {
      throw badFile('The statement is for another account than the one named (its account number differs).');
    }
    if (parsed.currency && parsed.currency !== account.currency) throw badFile(`The statement is in ${parsed.currency}; the account is in ${account.currency}.`);
    const foreign = parsed.entries.findIndex((e) => e.currency !== account.currency);
    if (foreign !== -1) throw badFile(`Line ${foreign + 1} is in ${parsed.entries[foreign].currency}; the account is in ${account.currency}.`);
    const sha = createHash('sha256').update(input.content).digest('hex');
    // One account's imports run one after another: the counts each reports are then exact.
    const imp = await withLock(ctx.db, `bank:import:${ctx.workspace}:${account._id}`, async () => {
      await completeStuckImports(ctx);
      return importStatement(ctx, account, input.format, parsed, sha);
    });
    return {
      import: {
        id: imp._id, bank_id: imp.bank_id, format: imp.format, statement_id: imp.statement_id, file_sha256: imp.file_sha256, entries: imp.entries,
        added: imp.added, already_there: imp.already_there, skipped: parsed.skipped,
      },
    };
  },
});
