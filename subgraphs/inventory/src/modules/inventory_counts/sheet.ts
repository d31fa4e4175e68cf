import { CuadraError, spreadsheetRow } from '@cuadra/shared';
import { fromMicro, toMicro } from '../stock/valuation.ts';
import type { CountDoc } from './model.ts';

/** exceljs, loaded at the first workbook rather than at the service's start (its import was ~10 % of the start's CPU). */
const excel = async () => (await import('exceljs')).default;

/** The columns of a count sheet, in order (the import reads them by header, not by position). */
export const HEADERS = ['item_id', 'SKU', 'Producto', 'Unidad', 'Esperado', 'Contado'] as const;

/** A count sheet as an XLSX workbook (written with exceljs): one row per item, `Contado` left blank to fill in. */
export async function sheetOf(count: CountDoc): Promise<Buffer> {
  const wb = new (await excel()).Workbook();
  wb.creator = 'Cuadra';
  const ws = wb.addWorksheet(`Conteo ${count.warehouse_code}`.slice(0, 31));
  // Every row through the one cell writer: an item named `=HYPERLINK(…)` stays text (OWASP CSV/formula injection).
  ws.addRow(spreadsheetRow([...HEADERS])).font = { bold: true };
  for (const l of count.lines) ws.addRow(spreadsheetRow([l.item_id, l.sku ?? '', l.item, l.unit, fromMicro(l.expected), ...(l.counted === null ? [] : [fromMicro(l.counted)])]));
  ws.getColumn(1).width = 26;
  ws.getColumn(3).width = 40;
  return Buffer.from(await wb.xlsx.writeBuffer());
}

/** The counted quantities of a filled-in sheet, by item id; refused at `/content` when it is not the sheet of this count. */
export async function countedIn(count: CountDoc, file: Buffer): Promise<Map<string, number>> {
  const wb = new (await excel()).Workbook();
  try {
    await wb.xlsx.load(file as unknown as ArrayBuffer);
  } catch {
    throw new CuadraError('invalid_input', 'The file is not an XLSX workbook.', { field: '/content' });
  }
  const ws = wb.worksheets[0];
  if (!ws) throw new CuadraError('invalid_input', 'The workbook has no worksheet.', { field: '/content' });
  const header = (ws.getRow(1).values as unknown[]).slice(1).map((v) => String(v ?? '').trim());
  const idCol = header.indexOf('item_id') + 1;
  const countedCol = header.indexOf('Contado') + 1;
  if (!idCol || !countedCol) throw new CuadraError('invalid_input', 'The sheet has no item_id and Contado columns (export the count sheet and fill in Contado).', { field: '/content' });
  const known = new Set(count.lines.map((l) => l.item_id));
  const out = new Map<string, number>();
  for (let r = 2; r <= ws.rowCount; r++) {
    const row = ws.getRow(r);
    const id = String(row.getCell(idCol).value ?? '').trim();
    const raw = row.getCell(countedCol).value;
    if (!id && (raw === null || raw === undefined || raw === '')) continue;
    if (!known.has(id)) throw new CuadraError('invalid_input', `Row ${r}: ${id || 'a row without item_id'} is not on this count sheet.`, { field: '/content' });
    if (raw === null || raw === undefined || raw === '') continue;
    const n = typeof raw === 'number' ? raw : Number(String(raw).replace(',', '.'));
    if (!Number.isFinite(n) || n < 0 || n > 1e9 || Math.abs(toMicro(n) / 1e6 - n) > 1e-9) throw new CuadraError('invalid_input', `Row ${r}: the count "${String(raw)}" is not a quantity (0 or more, up to 6 decimals).`, { field: '/content' });
    out.set(id, toMicro(n));
  }
  return out;
}
