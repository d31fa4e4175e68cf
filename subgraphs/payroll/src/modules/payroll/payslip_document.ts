import type { PayrollLine } from './calc.ts';
import type { Employer } from './epayroll.ts';
import { payslipNet, type Payslip, type PayslipSettlement, type RunDoc } from './runs.ts';
import type { SettlementConcept, TerminationReason } from './settlement.ts';

/**
 * The payslip as a person reads it (desprendible de pago): HTML in Spanish, and the same page
 * printed to PDF by Chromium (Debian's /usr/bin/chromium through playwright-core; INFRA.md).
 */

/** Spanish names of the engine's concepts (calc.ts). */
const CONCEPTS: Record<string, string> = {
  salary: 'Salario',
  transport_allowance: 'Auxilio de transporte',
  commissions: 'Comisiones',
  bonus_salary: 'Bonificación salarial',
  bonus_non_salary: 'Bonificación no salarial',
  vacations: 'Vacaciones disfrutadas',
  sick_leave: 'Incapacidad',
  night: 'Recargo nocturno',
  sunday_holiday: 'Recargo dominical y festivo',
  sunday_holiday_night: 'Recargo nocturno dominical y festivo',
  overtime_day: 'Hora extra diurna',
  overtime_night: 'Hora extra nocturna',
  overtime_day_sunday_holiday: 'Hora extra diurna dominical y festiva',
  overtime_night_sunday_holiday: 'Hora extra nocturna dominical y festiva',
  health: 'Salud',
  pension: 'Pensión',
  solidarity_fund: 'Fondo de solidaridad pensional',
  arl: 'Riesgos laborales (ARL)',
  family_fund: 'Caja de compensación familiar',
  icbf: 'ICBF',
  sena: 'SENA',
  loan: 'Préstamo',
  garnishment: 'Embargo judicial',
  other: 'Otra deducción',
  severance: 'Cesantías',
  severance_interest: 'Intereses sobre cesantías',
  service_bonus: 'Prima de servicios',
};

/** The Spanish name of a concept (a deduction's label follows its kind after a colon, if any). */
export function conceptName(concept: string): string {
  const [kind, ...rest] = concept.split(':');
  const base = CONCEPTS[kind] ?? kind;
  return rest.length ? `${base}: ${rest.join(":").trim()}` : base;
}

/**
 * Money as Colombians write it: `COP 1.200.000` (dots for thousands), with `,50` only when
 * there are centavos. `minor` is integer centavos (CONTRACT §3).
 */
export function formatCop(minor: number): string {
  const sign = minor < 0 ? '-' : '';
  const abs = Math.abs(minor);
  const pesos = Math.floor(abs / 100);
  const cents = abs % 100;
  const grouped = String(pesos).replace(/\B(?=(\d{3})+(?!\d))/g, '.');
  return `${sign}COP ${grouped}${cents ? `,${String(cents).padStart(2, '0')}` : ''}`;
}

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

function detail(l: PayrollLine): string {
  const parts: string[] = [];
  if (l.date) parts.push(l.date);
  if (l.hours !== undefined) parts.push(`${String(l.hours).replace('.', ',')} h`);
  if (l.days !== undefined) parts.push(`${l.days} días`);
  if (l.payer === 'health_fund') parts.push('a cargo de la EPS');
  if (l.rate_ppm !== undefined) parts.push(`${String(l.rate_ppm / 10_000).replace('.', ',')} %`);
  if (l.base !== undefined) parts.push(`base ${formatCop(l.base)}`);
  return parts.join(' · ');
}

function table(title: string, lines: readonly PayrollLine[], total: number, totalLabel: string): string {
  const rows = lines.map((l) => `<tr><td>${esc(conceptName(l.concept))}</td><td class="d">${esc(detail(l))}</td><td class="n">${formatCop(l.amount)}</td></tr>`).join('');
  return `<section><h2>${title}</h2><table><thead><tr><th>Concepto</th><th>Detalle</th><th class="n">Valor</th></tr></thead><tbody>${rows || '<tr><td colspan="3">Ninguno</td></tr>'}</tbody>`
    + `<tfoot><tr><th colspan="2">${totalLabel}</th><th class="n">${formatCop(total)}</th></tr></tfoot></table></section>`;
}

/** Spanish names of the final settlement's lines. */
const SETTLEMENT_NAMES: Record<SettlementConcept, string> = {
  severance: 'Cesantías',
  severance_interest: 'Intereses sobre cesantías',
  service_bonus: 'Prima de servicios',
  vacations: 'Vacaciones compensadas en dinero',
  indemnity: 'Indemnización por terminación sin justa causa (CST art. 64)',
};

/** Why the contract ended, as the payslip says it. */
const REASON_NAMES: Record<TerminationReason, string> = {
  resignation: 'renuncia', just_cause: 'despido con justa causa', without_just_cause: 'despido sin justa causa',
  constructive_dismissal: 'renuncia por justa causa imputable al empleador', mutual_agreement: 'mutuo acuerdo',
  end_of_term: 'vencimiento del plazo pactado', other: 'otra causa',
};

/** The final settlement (liquidación definitiva) as a table: each concept with its days and base, the indemnity with how it was reckoned. */
function settlementTable(s: PayslipSettlement): string {
  const rows = s.lines.map((l) => {
    // The indemnity's note says what its days are; vacations count the days of service.
    const days = l.concept === 'indemnity' ? [] : [`${l.days} días${l.concept === 'vacations' ? ' de servicio' : ''}`];
    const what = [...days, `base ${formatCop(l.base)}`, ...(l.note ? [l.note] : [])].join(' · ');
    return `<tr><td>${esc(SETTLEMENT_NAMES[l.concept])}</td><td class="d">${esc(what)}</td><td class="n">${formatCop(l.amount)}</td></tr>`;
  }).join('');
  return `<section id="settlement"><h2>Liquidación definitiva</h2><p>Contrato terminado el ${s.date} (${REASON_NAMES[s.reason]}).</p>`
    + `<table><thead><tr><th>Concepto</th><th>Detalle</th><th class="n">Valor</th></tr></thead><tbody>${rows}</tbody>`
    + `<tfoot><tr><th colspan="2">Total liquidación</th><th class="n">${formatCop(s.total)}</th></tr></tfoot></table></section>`;
}

/** Options of {@link payslipHtml}. */
export interface PayslipHtmlOptions {
  /** The employer's contributions and provisions are the employer's cost: shown only when asked. */
  employer_costs?: boolean;
  /** The employer the payslip is issued by: its legal name and NIT head the page. */
  employer: Employer;
}

/** A NIT as Colombians write it: `900.373.115-3`. */
export function formatNit(nit: string, dv: number): string {
  return `${nit.replace(/\B(?=(\d{3})+(?!\d))/g, '.')}-${dv}`;
}

/** The payslip of one employee in a run, as a complete HTML page in Spanish (es-CO). */
export function payslipHtml(run: Pick<RunDoc, '_id' | 'status' | 'period' | 'frequency'>, p: Payslip, opts: PayslipHtmlOptions): string {
  const r = p.result;
  const t = r.totals;
  const withheld = [...r.employee_contributions, ...r.deductions];
  const draft = run.status === 'posted' ? '' : `<p class="warn">Borrador: la nómina está ${({ computed: 'calculada, sin aprobar', approved: 'aprobada, sin contabilizar', void: 'anulada', posted: '' })[run.status]}.</p>`;
  const employer = opts.employer_costs
    ? table('Aportes del empleador', r.employer_contributions, t.employer_contributions, 'Total aportes del empleador')
      + table('Provisiones de prestaciones sociales', r.provisions, t.provisions, 'Total provisiones')
    : '';
  return `<!doctype html>
<html lang="es-CO"><head><meta charset="utf-8"><title>Desprendible de nómina — ${esc(p.name)} — ${r.period.from} a ${r.period.to}</title>
<style>
body{font-family:"DejaVu Sans",Arial,sans-serif;font-size:12px;color:#111;margin:24px}
h1{font-size:18px;margin:0 0 4px}h2{font-size:14px;margin:18px 0 6px}
table{width:100%;border-collapse:collapse}th,td{border-bottom:1px solid #ccc;padding:4px 6px;text-align:left;vertical-align:top}
.n{text-align:right;white-space:nowrap}.d{color:#555}.warn{color:#8a4b00;font-weight:bold}
dl{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;margin:8px 0}dt{font-weight:bold}
.net{font-size:16px;margin-top:18px;border:2px solid #111;padding:8px}
</style></head><body>
<header><h1>Desprendible de nómina</h1>${draft}
<dl>
<dt>Empleador</dt><dd id="employer">${esc(opts.employer.company_name)} · NIT ${formatNit(opts.employer.nit, opts.employer.dv)}</dd>
<dt>Empleado</dt><dd>${esc(p.name)}</dd>
<dt>Documento</dt><dd>${esc(p.document.type)} ${esc(p.document.number)}</dd>
<dt>Cargo</dt><dd>${esc(p.position)}</dd>
<dt>Periodo</dt><dd>${r.period.from} a ${r.period.to} (${r.period.days} días)</dd>
<dt>Días trabajados</dt><dd>${r.days_worked}${r.sick_days ? ` · incapacidad ${r.sick_days}` : ''}${r.vacation_days ? ` · vacaciones ${r.vacation_days}` : ''}${r.unpaid_days ? ` · licencia no remunerada ${r.unpaid_days}` : ''}</dd>
<dt>Nómina</dt><dd>${esc(run._id)}</dd>
</dl></header>
${table('Devengados', r.earnings, t.earnings, 'Total devengado')}
${table('Deducciones', withheld, t.employee_contributions + t.deductions, 'Total deducciones')}
${p.settlement ? `<p>Neto del periodo: ${formatCop(t.net)}</p>\n${settlementTable(p.settlement)}` : ''}
<p class="net"><strong>Neto a pagar: <span id="net">${formatCop(payslipNet(p))}</span></strong></p>
${employer}
<footer><p class="d">Ingreso base de cotización (salud y pensión): ${formatCop(r.ibc.health_pension)}.</p></footer>
</body></html>`;
}

/** Printed by the one hardened printer every service uses (no network, no scripts, two at a time). */
export { htmlToPdf } from '@cuadra/shared/pdf';
