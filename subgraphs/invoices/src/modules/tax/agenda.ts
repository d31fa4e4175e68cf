import { localDate, type AgendaEntry, type LaneReader } from '@cuadra/shared';
import type { Connection } from 'mongoose';
import { ledgerBetween } from '../../books/general-ledger.ts';
import { settings } from '../../lib/settings.ts';
import { UVT } from '../../accounting/uvt.ts';
import { CALENDAR_YEARS, deadlinesDueIn, dueDate, LEGAL_SOURCE, VAT_BIMONTHLY_UVT, type Obligation } from './calendar.ts';
import { defaultProfile, taxProfiles, type TaxProfileDoc } from './model.ts';
import { monthWithholdings } from './withholdings.ts';

/** Gross income of a year (credits to class 4 without the closing entries), in cents of the base currency. */
async function grossIncome(db: Connection, workspace: string, currency: string, year: number): Promise<number> {
  const [sums] = await ledgerBetween(db, workspace, currency, [{ from: `${year}-01-01`, to: `${year}-12-31` }]);
  return Object.entries(sums).filter(([k]) => /^c4/.test(k)).reduce((s, [k, v]) => s + v - (sums[`k${k}`] ?? 0), 0);
}

/**
 * The VAT period of a year's periods (art. 600 E.T.): bimonthly for large taxpayers and whoever had
 * gross income ≥ 92,000 UVT (of that earlier year) the year before, else four-monthly.
 */
async function vatMode(db: Connection, profile: TaxProfileDoc, currency: string, periodYear: number): Promise<{ mode: 'vat_bimonthly' | 'vat_four_monthly' | null; basis: string }> {
  if (profile.vat === 'not_responsible') return { mode: null, basis: 'not responsible for VAT (tax profile)' };
  if (profile.large_taxpayer) return { mode: 'vat_bimonthly', basis: 'large taxpayer' };
  if (profile.vat !== 'auto') return { mode: `vat_${profile.vat}`, basis: 'tax profile' };
  const uvt = UVT[periodYear - 1];
  if (!uvt) return { mode: 'vat_bimonthly', basis: `no UVT known for ${periodYear - 1}: bimonthly assumed` };
  const income = await grossIncome(db, profile.workspace, currency, periodYear - 1);
  const threshold = VAT_BIMONTHLY_UVT * uvt.value * 100;
  return income >= threshold
    ? { mode: 'vat_bimonthly', basis: `income ${periodYear - 1} ≥ 92,000 UVT` }
    : { mode: 'vat_four_monthly', basis: `income ${periodYear - 1} < 92,000 UVT` };
}

/**
 * The `tax` agenda lane (specification §2.6): the workspace's DIAN deadlines in the window — VAT
 * (bimonthly or four-monthly), monthly withholding at source, income tax (two instalments for a
 * legal person, three for a large taxpayer) — dated by the last digit of its NIT from the national
 * calendar (calendar.ts, with its legal source). A withholding deadline carries its month's
 * Formulario 350 figures as declared (`amount`, `ref.form_350`; tax.withholdings gives them whole). Only the years the calendar holds (2026, 2027)
 * are answered. No overdue entries: the lane does not know what was filed. A workspace without a
 * NIT (no tax profile NIT, no e-invoicing set-up) has no entries.
 */
export const taxLane: LaneReader = async (w, ctx) => {
  const profile = (await taxProfiles(ctx.db).findById(ctx.workspace).lean()) ?? defaultProfile(ctx.workspace, ctx.now);
  const set = await settings(ctx.db).findById(ctx.workspace, { issuer: 1, currency: 1 }).lean();
  const nit = profile.nit ?? set?.issuer?.nit?.replace(/\D/g, '') ?? null;
  if (!nit) return [];
  const currency = set?.currency ?? 'COP';
  const today = localDate(ctx.now);
  const entries: AgendaEntry[] = [];
  const modes = new Map<number, Awaited<ReturnType<typeof vatMode>>>();
  for (let year = Number(w.from.slice(0, 4)); year <= Number(w.to.slice(0, 4)); year++) {
    const known = CALENDAR_YEARS[year];
    if (!known) continue;
    const wanted = new Set<Obligation>(['vat_bimonthly', 'vat_four_monthly']);
    if (profile.withholding_agent) wanted.add('withholding');
    if (profile.income_tax) wanted.add(profile.large_taxpayer ? 'income_tax_large_taxpayer' : 'income_tax_legal_person');
    for (const d of deadlinesDueIn(year, wanted)) {
      const date = dueDate(d, nit);
      if (date < w.from || date > w.to) continue;
      if (d.obligation.startsWith('vat_')) {
        const periodYear = Number(d.period.slice(0, 4));
        if (!modes.has(periodYear)) modes.set(periodYear, await vatMode(ctx.db, profile, currency, periodYear));
        if (modes.get(periodYear)!.mode !== d.obligation) continue;
      }
      // The monthly withholding return carries its month's figures (tax.withholdings): what is to be declared and paid.
      const form350 = d.obligation === 'withholding' ? (await monthWithholdings(ctx.db, ctx.workspace, currency, d.period.slice(0, 7))).form_350 : null;
      entries.push({
        date, kind: 'tax', source: 'tax', title: d.title, status: date < today ? 'past' : 'open',
        ref: {
          obligation: d.obligation, form: d.form, period: d.period, nit_last_digit: nit[nit.length - 1], ...(d.obligation.startsWith('vat_') ? { basis: modes.get(Number(d.period.slice(0, 4)))!.basis } : {}),
          ...(form350 ? {
            tool: 'tax.withholdings', month: d.period.slice(0, 7),
            form_350: { renta: form350.renta_total.declared, iva: form350.iva.declared, total: form350.total.declared, rows: form350.renta.filter((r) => r.withheld !== 0).map((r) => ({ row: r.row, base: r.declared.base, withheld: r.declared.withheld })) },
          } : {}),
        },
        ...(form350 ? { amount: form350.total.declared, currency } : {}),
        legal_source: `${LEGAL_SOURCE}, art. ${d.article}`, article_verified: d.articleVerified, verified: known.verified,
      });
    }
  }
  entries.sort((a, b) => a.date.localeCompare(b.date) || a.title.localeCompare(b.title));
  return entries.slice(0, w.limit);
};
