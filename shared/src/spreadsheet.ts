/*
 * The one place an export writes a spreadsheet cell (issue 31, finding 10). A spreadsheet program
 * reads a cell whose text starts with `=`, `+`, `-` or `@` — or with a tab or carriage return
 * before one — as a formula (OWASP, "CSV Injection"): a vendor or account name such as
 * `=HYPERLINK("http://…?"&A1)` would run when a person opens the file. Every text cell of an XLSX
 * or CSV export goes through {@link spreadsheetCell}; numbers and dates are written as they are.
 */

/** The first characters that make a spreadsheet read a text cell as a formula (OWASP's list). */
const FORMULA_START = new Set(['=', '+', '-', '@', '\t', '\r']);

/** A value as an export writes it into a cell: text that would start a formula gets OWASP's leading single quote. */
export function spreadsheetCell<T>(value: T): T | string {
  if (typeof value !== 'string' || value.length === 0 || !FORMULA_START.has(value[0])) return value;
  return `'${value}`;
}

/** A row of cells, each through {@link spreadsheetCell}. */
export function spreadsheetRow<T>(values: readonly T[]): (T | string)[] {
  return values.map(spreadsheetCell);
}
