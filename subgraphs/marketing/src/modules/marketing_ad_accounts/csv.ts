import { parse } from 'csv-parse/sync';
import { CuadraError } from '@cuadra/shared';
import type { AdPlatform } from './model.ts';

/*
 * The spend exports of the ad platforms, read with csv-parse. Meta Ads Manager ("Export table data",
 * broken down by day) names its columns "Campaign name", "Day", "Amount spent (COP)" (Spanish:
 * "Nombre de la campaña", "Día", "Importe gastado (COP)"); Google Ads reports ("Download → CSV")
 * start with the report's title and date range, then "Campaign", "Day", "Currency code", "Cost"
 * (Spanish: "Campaña", "Día", "Código de moneda", "Costo") and end with "Total: …" rows. A mapping
 * names other columns, and the decimal separator when it is a comma.
 */

/** Columns the caller names when an export is not in a known layout. */
export interface ColumnMapping { campaign?: string; day?: string; amount?: string; currency?: string; impressions?: string; clicks?: string; decimal_separator?: '.' | ',' }

/** One parsed line of spend. */
export interface SpendLine { row: number; campaign: string; day: string; amount: number; currency: string | null; impressions: number | null; clicks: number | null }

const KNOWN: Record<AdPlatform, Record<'campaign' | 'day' | 'amount' | 'currency' | 'impressions' | 'clicks', RegExp>> = {
  meta: {
    campaign: /^(campaign name|nombre de la campaña)$/i, day: /^(day|día|dia|reporting starts|inicio del informe)$/i,
    amount: /^(amount spent|importe gastado)( \([A-Z]{3}\))?$/i, currency: /^(currency|divisa|moneda)$/i,
    impressions: /^(impressions|impresiones)$/i, clicks: /^(link clicks|clics en el enlace|clicks \(all\)|clics \(todos\))$/i,
  },
  google_ads: {
    campaign: /^(campaign|campaña)$/i, day: /^(day|día|dia)$/i, amount: /^(cost|costo|coste)$/i,
    currency: /^(currency code|código de moneda|currency|moneda)$/i, impressions: /^(impr\.|impressions|impresiones)$/i, clicks: /^(clicks|clics)$/i,
  },
};

/** The greatest minor-unit amount accepted (as finance's). */
const MAX_AMOUNT = 1e15;

/** An amount as written in the export, in minor units (two decimals), exactly: no floating point. */
export function minorUnits(text: string, decimal: '.' | ','): number | null {
  const thousands = decimal === '.' ? ',' : '.';
  const clean = text.trim().replace(/[\s$€]|COP|USD|EUR/g, '').split(thousands).join('');
  const m = new RegExp(`^(\\d+)(?:\\${decimal}(\\d{1,2}))?$`).exec(clean);
  if (!m) return null;
  const value = Number(m[1]) * 100 + Number((m[2] ?? '').padEnd(2, '0'));
  return Number.isSafeInteger(value) && value <= MAX_AMOUNT ? value : null;
}

function count(text: string | undefined): number | null {
  if (text === undefined || text.trim() === '' || text.trim() === '--') return null;
  const n = Number(text.replace(/[.,\s]/g, ''));
  return Number.isSafeInteger(n) && n >= 0 ? n : null;
}

/**
 * Reads an export into lines of spend. Refusals are `invalid_input` at `/csv` naming the row (1 =
 * the file's first line) and what is wrong; nothing is kept from a file with any bad row.
 */
export function readSpendCsv(csv: string, platform: AdPlatform, mapping: ColumnMapping = {}): { lines: SpendLine[]; currency: string | null } {
  let records: string[][];
  try {
    records = parse(csv.replace(/^\uFEFF/, ''), { relax_column_count: true, skip_empty_lines: true, trim: true, bom: true }) as string[][];
  } catch (err) {
    throw new CuadraError('invalid_input', `The file is not valid CSV: ${(err as Error).message.split('\n')[0]}`.slice(0, 300), { field: '/csv' });
  }
  const known = KNOWN[platform];
  const find = (header: string[], key: keyof typeof known) => {
    const named = mapping[key as keyof ColumnMapping] as string | undefined;
    return named !== undefined ? header.findIndex((h) => h.toLowerCase() === named.toLowerCase()) : header.findIndex((h) => known[key].test(h));
  };
  // The header is the first line that names a campaign column (Google's title lines come before it).
  const headerAt = records.slice(0, 10).findIndex((r) => find(r, 'campaign') >= 0);
  if (headerAt < 0) {
    const named = mapping.campaign ? `"${mapping.campaign}"` : 'campaign';
    throw new CuadraError('invalid_input', `No ${named} column in the first lines: this is not a ${platform === 'meta' ? 'Meta Ads Manager' : 'Google Ads'} export broken down by day; give the column names in mapping.`, { field: '/csv' });
  }
  const header = records[headerAt];
  const col = { campaign: find(header, 'campaign'), day: find(header, 'day'), amount: find(header, 'amount'), currency: find(header, 'currency'), impressions: find(header, 'impressions'), clicks: find(header, 'clicks') };
  for (const key of ['day', 'amount'] as const) {
    if (col[key] < 0) throw new CuadraError('invalid_input', `No ${mapping[key] ? `"${mapping[key]}"` : key} column in the export's header (${header.join(', ')}).`, { field: mapping[key] ? `/mapping/${key}` : '/csv' });
  }
  // Meta names the currency in the amount's header ("Amount spent (COP)").
  const headerCurrency = /\(([A-Z]{3})\)$/.exec(header[col.amount])?.[1] ?? null;
  const decimal = mapping.decimal_separator ?? '.';
  const lines: SpendLine[] = [];
  for (let i = headerAt + 1; i < records.length; i++) {
    const r = records[i];
    const row = i + 1;
    const campaign = r[col.campaign] ?? '';
    const day = r[col.day] ?? '';
    // Google's closing "Total: …" rows and Meta's summary row carry no day.
    if (/^total/i.test(campaign) || /^total/i.test(r[0] ?? '') || ((day === '' || day === '--') && !campaign)) continue;
    if (!campaign) throw new CuadraError('invalid_input', `Row ${row} has no campaign.`, { field: '/csv' });
    if (!/^\d{4}-\d{2}-\d{2}$/.test(day) || Number.isNaN(Date.parse(`${day}T00:00:00Z`)) || new Date(`${day}T00:00:00Z`).toISOString().slice(0, 10) !== day) {
      throw new CuadraError('invalid_input', `Row ${row}: the day "${day.slice(0, 40)}" is not a date YYYY-MM-DD (export the report broken down by day).`, { field: '/csv' });
    }
    const amount = minorUnits(r[col.amount] ?? '', decimal);
    if (amount === null) throw new CuadraError('invalid_input', `Row ${row}: the amount "${(r[col.amount] ?? '').slice(0, 40)}" is not a number with at most two decimals (decimal separator "${decimal}").`, { field: '/csv' });
    const currency = col.currency >= 0 ? (r[col.currency] || null) : headerCurrency;
    lines.push({ row, campaign: campaign.slice(0, 300), day, amount, currency, impressions: col.impressions >= 0 ? count(r[col.impressions]) : null, clicks: col.clicks >= 0 ? count(r[col.clicks]) : null });
  }
  if (lines.length === 0) throw new CuadraError('invalid_input', 'The export has no rows of spend.', { field: '/csv' });
  return { lines, currency: headerCurrency };
}
