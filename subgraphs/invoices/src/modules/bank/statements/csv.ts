import { createHash } from 'node:crypto';
import { parse } from 'csv-parse/sync';
import { badFile, isDate, minorUnits, type ParsedStatement, type StatementEntry } from './entry.ts';

/** How the columns of a bank's CSV export map onto a statement line (by header name). */
export interface CsvMapping {
  date: string;
  /** One signed amount column, or `debit` and `credit` columns (both positive). */
  amount?: string;
  debit?: string;
  credit?: string;
  description: string;
  reference?: string;
  /** A column holding the bank's own id of the line, when the export has one. */
  id?: string;
  date_format?: 'YYYY-MM-DD' | 'DD/MM/YYYY' | 'MM/DD/YYYY';
  decimal_separator?: '.' | ',';
  delimiter?: ',' | ';' | '\t';
}

function dateFrom(value: string, format: NonNullable<CsvMapping['date_format']>, row: number): string {
  const v = value.trim();
  let d = v;
  if (format !== 'YYYY-MM-DD') {
    const [a, b, y] = v.split('/');
    d = format === 'DD/MM/YYYY' ? `${y}-${b?.padStart(2, '0')}-${a?.padStart(2, '0')}` : `${y}-${a?.padStart(2, '0')}-${b?.padStart(2, '0')}`;
  }
  if (!isDate(d)) throw badFile(`Row ${row}: "${value}" is not a date in the format ${format}.`);
  return d;
}

/** The amount of a row: the signed column, or credit − debit. Thousands separators are refused, not guessed. */
function amountFrom(record: Record<string, string>, m: CsvMapping, currency: string, row: number): number {
  const sep = m.decimal_separator ?? '.';
  if (m.amount) return minorUnits(record[m.amount] ?? '', currency, `Row ${row}`, sep);
  const debit = (record[m.debit!] ?? '').trim();
  const credit = (record[m.credit!] ?? '').trim();
  if ((debit === '') === (credit === '')) throw badFile(`Row ${row}: exactly one of the debit and credit columns must hold an amount.`);
  return credit ? minorUnits(credit, currency, `Row ${row}`, sep) : -minorUnits(debit, currency, `Row ${row}`, sep);
}

/** Reads a CSV export with a header row through a column mapping (csv-parse). */
export function parseCsv(content: string, m: CsvMapping, currency: string, statementId: string | undefined): ParsedStatement {
  if (!m.amount && !(m.debit && m.credit)) throw badFile('The mapping needs an amount column, or both debit and credit columns.', '/csv/amount');
  let records: Record<string, string>[];
  try {
    records = parse(content, { columns: true, bom: true, skip_empty_lines: true, trim: true, delimiter: m.delimiter ?? ',', relax_column_count: false });
  } catch (err) {
    throw badFile(`The file is not CSV as mapped: ${(err as Error).message}`);
  }
  const header = records.length ? Object.keys(records[0]) : [];
  for (const [key, column] of Object.entries(m)) {
    if (['date_format', 'decimal_separator', 'delimiter'].includes(key) || column === undefined) continue;
    if (records.length && !header.includes(column)) throw badFile(`The file has no column "${column}" (its columns: ${header.join(', ')}).`, `/csv/${key}`);
  }
  const entries: StatementEntry[] = records.map((r, i) => {
    const row = i + 2; // the header is row 1
    const date = dateFrom(r[m.date] ?? '', m.date_format ?? 'YYYY-MM-DD', row);
    const amount = amountFrom(r, m, currency, row);
    const description = (r[m.description] ?? '').trim() || 'Sin descripción';
    const reference = m.reference ? (r[m.reference] ?? '').trim() || null : null;
    const id = m.id ? (r[m.id] ?? '').trim() || null : null;
    return { entry_id: id, date, amount, currency, description, reference };
  });
  const fileHash = createHash('sha256').update(content).digest('hex').slice(0, 16);
  return { statement_id: statementId ?? `csv:${fileHash}`, account: null, currency, entries, skipped: 0 };
}
