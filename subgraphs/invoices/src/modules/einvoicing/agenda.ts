import type { AgendaEntry, LaneReader } from '@cuadra/shared';
import { certificates } from '../../e-documents/certificate.ts';
import { addDays, daysBetween, localDate } from '../../lib/money.ts';
import { counterId, counters, rangeOf, settings, type NumberedKind } from '../../lib/settings.ts';

/** A certificate or a numbering resolution is warned of this many days before it lapses. */
export const EXPIRY_WARNING_DAYS = 30;
/** A numbering range is warned of once at most this share (percent) of its numbers is left. */
export const EXHAUSTION_WARNING_PERCENT = 10;

const RANGE_NAME = { invoice: 'facturas', credit_note: 'notas crédito', debit_note: 'notas débito' } as const;

/**
 * When a deadline (`ends`, the last valid day) is shown: from {@link EXPIRY_WARNING_DAYS} days
 * before it, dated that day while it is ahead, dated today during the warning period ("act now"),
 * and dated the deadline itself once it has passed (`overdue`).
 */
function expiryEntry(ends: string, today: string): { date: string; status: 'open' | 'overdue'; days_left: number } {
  const warnFrom = addDays(ends, -EXPIRY_WARNING_DAYS);
  const daysLeft = daysBetween(today, ends);
  if (today < warnFrom) return { date: warnFrom, status: 'open', days_left: daysLeft };
  if (today <= ends) return { date: today, status: 'open', days_left: daysLeft };
  return { date: ends, status: 'overdue', days_left: daysLeft };
}

/**
 * E-invoicing's compliance warnings, in the `tax` lane (the specification's lanes are fixed:
 * events, tax, receivables, payables, recurring, tasks; these are obligations towards DIAN):
 * the signing certificate's expiry and each numbering resolution's end (`valid_to`), 30 days
 * ahead; a numbering range with 10 % or less of its numbers left, dated today. Kind `compliance`.
 * Reads the workspace's set-up, certificate and at most three counters.
 */
export const einvoicingLane: LaneReader = async (w, ctx) => {
  const start = w.overdue ? addDays(w.from, -90) : w.from;
  const today = localDate(ctx.now);
  const inWindow = (date: string) => date >= start && date <= w.to;
  const entries: AgendaEntry[] = [];
  const cert = await certificates(ctx.db).findById(ctx.workspace, { not_after: 1, subject: 1, serial: 1 }).lean();
  if (cert) {
    const ends = localDate(new Date(cert.not_after));
    const e = expiryEntry(ends, today);
    if (inWindow(e.date)) {
      entries.push({
        date: e.date, kind: 'compliance', source: 'tax', status: e.status,
        title: e.status === 'overdue' ? `Certificado de firma electrónica vencido el ${ends}: renuévelo y cárguelo` : `Renovar el certificado de firma electrónica: vence el ${ends} (en ${e.days_left} días)`,
        ref: { kind: 'certificate', expires_on: ends, serial: cert.serial, days_left: e.days_left },
      });
    }
  }
  const s = await settings(ctx.db).findById(ctx.workspace, { numbering: 1 }).lean();
  if (s) {
    const kinds: NumberedKind[] = ['invoice', 'credit_note', 'debit_note'];
    const ranges = kinds.map((kind) => ({ kind, range: rangeOf(s.numbering, kind) }));
    const used = new Map((await counters(ctx.db).find({ _id: { $in: ranges.map((r) => counterId(ctx.workspace, r.kind, r.range.prefix)) } }).lean()).map((c) => [c._id, c.next]));
    for (const { kind, range } of ranges) {
      if (range.valid_to) {
        const e = expiryEntry(range.valid_to, today);
        if (inWindow(e.date)) {
          entries.push({
            date: e.date, kind: 'compliance', source: 'tax', status: e.status,
            title: e.status === 'overdue' ? `Resolución de numeración de ${RANGE_NAME[kind]} ${range.resolution ?? range.prefix} vencida el ${range.valid_to}` : `Resolución de numeración de ${RANGE_NAME[kind]} ${range.resolution ?? range.prefix} vence el ${range.valid_to} (en ${e.days_left} días): solicite una nueva`,
            ref: { kind: 'numbering_resolution', range: kind, prefix: range.prefix, resolution: range.resolution, valid_to: range.valid_to, days_left: e.days_left },
          });
        }
      }
      const next = used.get(counterId(ctx.workspace, kind, range.prefix)) ?? range.from;
      const total = range.to - range.from + 1;
      const left = Math.max(0, range.to - next + 1);
      // Integer test: left / total ≤ 10 %.
      if (left * 100 <= total * EXHAUSTION_WARNING_PERCENT && inWindow(today)) {
        entries.push({
          date: today, kind: 'compliance', source: 'tax', status: left === 0 ? 'overdue' : 'open',
          title: left === 0
            ? `Numeración de ${RANGE_NAME[kind]} ${range.prefix}${range.from}–${range.prefix}${range.to} agotada: autorice un nuevo rango`
            : `Numeración de ${RANGE_NAME[kind]} ${range.prefix}${range.from}–${range.prefix}${range.to}: quedan ${left} de ${total} números`,
          ref: { kind: 'numbering_exhaustion', range: kind, prefix: range.prefix, left, total, next_number: left ? `${range.prefix}${next}` : null },
        });
      }
    }
  }
  return entries.sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : 0)).slice(0, w.limit);
};
