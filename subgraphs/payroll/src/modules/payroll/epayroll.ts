import { createHash } from 'node:crypto';
import { CuadraError, decimalAmount, localDate, sealerFromEnv, type Sealer } from '@cuadra/shared';
import { dianSecrets, type AuthorityAnswer } from '@cuadra/shared/dian';
import { XMLBuilder } from 'fast-xml-parser';
import { Schema, type Connection, type Model } from 'mongoose';
import type { EmployeeDoc } from '../employees/model.ts';
import { commercialWeight, type PayrollLine } from './calc.ts';
import type { RunDoc } from './runs.ts';
import type { SettlementConcept } from './settlement.ts';
import { SIGNATURE_EXTENSION, SIGNATURE_ROOT_ATTRIBUTES } from './epayroll_certificate.ts';

/**
 * The electronic payroll support document (documento soporte de pago de nómina electrónica,
 * "Nómina Individual", TipoXML 102) of DIAN Resolución 000013 de 2021 and its technical annex
 * (Anexo técnico v1.0), one per employee and month, built from the month's posted runs.
 *
 * Element and attribute names follow the annex's XSD, NominaIndividualElectronicaXSD.xsd v1.0.6 of
 * DIAN's Caja de Herramientas (kept beside this file in xsd/, with the UBL 2.1 schemas it
 * imports; the tests validate every document against it with xmllint). Sequence order matters:
 * Periodo, NumeroSecuenciaXML, LugarGeneracionXML, ProveedorXML, CodigoQR, InformacionGeneral,
 * Notas, Empleador, Trabajador, Pago, FechasPagos, Devengados, Deducciones, DevengadosTotal,
 * DeduccionesTotal, ComprobanteTotal.
 *
 * - CUNE (annex §8.1.1.1; DOMAIN.md) = SHA-384, hex, of
 *   NumNE + FecNE + HorNE + ValDev + ValDed + ValTolNE + NitNE + DocEmp + TipoXML + SoftwarePin + TipAmb,
 *   the values with two decimals and a dot (DIAN's validator formats them `F2`; a wrong CUNE is its rule NIE024).
 * - SoftwareSC (annex §8.3) = SHA-384 of SoftwareID + SoftwarePin + Numero.
 * - Amounts are pesos with two decimals; ours are integer centavos (CONTRACT §3), so the text is exact.
 */

export const NOMINA_NS = 'dian:gov:co:facturaelectronica:NominaIndividual';
/** TipoXML of the Nómina Individual (103 is the adjustment note, Nómina Individual de Ajuste). */
export const TIPO_XML_NOMINA = '102';
/** TipoXML of the adjustment note (Nómina Individual de Ajuste), and its namespace. */
export const TIPO_XML_AJUSTE = '103';
export const NOMINA_AJUSTE_NS = 'dian:gov:co:facturaelectronica:NominaIndividualDeAjuste';

/** The fields the CUNE is made of, in order. */
export interface CuneParts {
  NumNE: string; FecNE: string; HorNE: string; ValDev: string; ValDed: string; ValTolNE: string;
  NitNE: string; DocEmp: string; TipoXML: string; SoftwarePin: string; TipAmb: string;
}

/** The string the CUNE hashes: its eleven fields concatenated. */
export function cuneInput(p: CuneParts): string {
  return p.NumNE + p.FecNE + p.HorNE + p.ValDev + p.ValDed + p.ValTolNE + p.NitNE + p.DocEmp + p.TipoXML + p.SoftwarePin + p.TipAmb;
}

export const sha384 = (s: string) => createHash('sha384').update(s, 'utf8').digest('hex');
export const cune = (p: CuneParts) => sha384(cuneInput(p));

/* ------------------------------------------------------------------ settings */

/**
 * What the employer registered with DIAN to issue payroll documents (its habilitación): the
 * NIT and check digit, name and address (DIVIPOLA department and municipality codes), the
 * software's id and PIN, the numbering prefix, the environment (2 habilitación/pruebas, 1
 * producción) and the payment method written on documents (DIAN code list 3.4.2; 10 efectivo,
 * 42 consignación bancaria…). One per workspace; `next_number` is the next consecutive.
 */
export interface EpayrollSettingsDoc {
  _id: string; // the workspace
  nit: string;
  dv: number;
  company_name: string;
  department: string;
  municipality: string;
  address: string;
  software_id: string;
  software_pin: string;
  prefix: string;
  environment: '1' | '2';
  payment_method: string;
  next_number: number;
  created_at: Date;
  updated_at: Date;
}

/**
 * The settings as stored: the software PIN only sealed (CONTRACT.md §9, context
 * `epayroll.software_pin:<workspace>`). Documents written before sealing hold it in plain
 * `software_pin`: still read, and sealed at start-up by {@link sealPlainEpayrollSettings}.
 */
export type StoredEpayrollSettingsDoc = Omit<EpayrollSettingsDoc, 'software_pin'> & { software_pin_sealed?: string; software_pin?: string };

const settingsSchema = new Schema<StoredEpayrollSettingsDoc>({
  _id: String, nit: String, dv: Number, company_name: String, department: String, municipality: String, address: String,
  software_id: String, software_pin_sealed: String, software_pin: String, prefix: String, environment: String, payment_method: String, next_number: Number, created_at: Date, updated_at: Date,
}, { versionKey: false });

/** The e-payroll settings collection (the PIN sealed: read it through {@link openEpayrollSettings}). */
export function epayrollSettings(db: Connection): Model<StoredEpayrollSettingsDoc> {
  return (db.models.EpayrollSettings as Model<StoredEpayrollSettingsDoc> | undefined) ?? db.model<StoredEpayrollSettingsDoc>('EpayrollSettings', settingsSchema, 'payroll_epayroll_settings');
}

/**
 * The consecutive a payroll document or note is numbered with: kept from an earlier rejected
 * attempt (its stored number), else the workspace's next one (one `$inc`).
 */
export async function consecutiveFor(db: Connection, workspace: string, settings: Pick<EpayrollSettingsDoc, 'prefix'>, existing: { number: string } | null): Promise<number> {
  if (existing) return Number(existing.number.slice(settings.prefix.length));
  const s = await epayrollSettings(db).findOneAndUpdate({ _id: workspace }, { $inc: { next_number: 1 } }, { returnDocument: 'before' }).lean();
  return s!.next_number;
}

/** The software PIN, sealed at rest as every DIAN set-up's secrets are (`epayroll.software_pin:<workspace>`, @cuadra/shared/dian). */
const SECRETS = dianSecrets({ service: 'epayroll', label: 'e-payroll', secrets: ['software_pin'], collection: 'payroll_epayroll_settings', configureTool: 'payroll.epayroll_configure' });

/** The sealer, or `unavailable` before any effect: without a sealing key the PIN is not kept at all. */
export const requireEpayrollSealer = SECRETS.requireSealer;

/** The software PIN sealed for storing. */
export function sealSoftwarePin(workspace: string, pin: string, sealer: Sealer): string {
  return SECRETS.seal(workspace, { software_pin: pin }, sealer).software_pin_sealed;
}

/**
 * Stored settings with the PIN opened (a plain one, written before sealing, as it is). A box that
 * does not open (the sealing key changed) is a `conflict`: documents built without it would be refused.
 */
export function openEpayrollSettings(doc: StoredEpayrollSettingsDoc, sealer: Sealer | null = sealerFromEnv()): EpayrollSettingsDoc {
  return SECRETS.open(doc, sealer) as EpayrollSettingsDoc;
}

/** The workspace's e-payroll settings with the PIN opened, or null when not configured. */
export async function openedEpayrollSettings(db: Connection, workspace: string): Promise<EpayrollSettingsDoc | null> {
  const doc = await epayrollSettings(db).findOne({ _id: workspace }).lean();
  return doc ? openEpayrollSettings(doc) : null;
}

/** Seals the PINs of settings written before sealing, at start-up. The number of documents sealed. */
export const sealPlainEpayrollSettings = SECRETS.sealPlain;

/** The employer as payslips name it: legal name and NIT with its check digit. */
export interface Employer { company_name: string; nit: string; dv: number }

/** JSON Schema of {@link Employer}. */
export const EMPLOYER_VIEW_SCHEMA = {
  type: 'object', additionalProperties: false, required: ['company_name', 'nit', 'dv'],
  properties: { company_name: { type: 'string' }, nit: { type: 'string' }, dv: { type: 'integer', minimum: 0, maximum: 10 } },
} as const;

/**
 * The workspace's employer (set by payroll.employer_configure or payroll.epayroll_configure), or
 * `conflict` naming the tool: a payslip that does not name its employer is not handed out.
 */
export async function requireEmployer(db: Connection, workspace: string): Promise<Employer> {
  const s = await epayrollSettings(db).findOne({ _id: workspace }, { company_name: 1, nit: 1, dv: 1 }).lean();
  if (!s?.company_name || !s.nit) throw new CuadraError('conflict', 'The employer\'s name and NIT are not set; a payslip names its employer. Set them with payroll.employer_configure (or payroll.epayroll_configure).');
  return { company_name: s.company_name, nit: s.nit, dv: s.dv };
}

/* ------------------------------------------------------------------ documents */

/** A submitted payroll document: one per employee and month (`<workspace>:<employee>:<month>`). */
export interface EpayrollDocumentDoc {
  _id: string;
  workspace: string;
  employee_id: string;
  month: string;
  number: string;
  cune: string;
  xml: string;
  status: 'accepted' | 'rejected';
  authority: AuthorityAnswer;
  /** Where it was submitted: the endpoint's URL, or the built-in sandbox. */
  endpoint: string;
  submitted_at: Date;
}

const documentSchema = new Schema<EpayrollDocumentDoc>({
  _id: String, workspace: String, employee_id: String, month: String, number: String, cune: String, xml: String, status: String,
  authority: Schema.Types.Mixed, endpoint: String, submitted_at: Date,
}, { versionKey: false, minimize: false });

export function epayrollDocuments(db: Connection): Model<EpayrollDocumentDoc> {
  return (db.models.EpayrollDocument as Model<EpayrollDocumentDoc> | undefined) ?? db.model<EpayrollDocumentDoc>('EpayrollDocument', documentSchema, 'payroll_epayroll_documents');
}

/* ------------------------------------------------------------------ building */

/** DIAN's document type codes (code list 5.2.1 of the annex, shared with e-invoicing): 13 cédula, 22 cédula de extranjería, 41 pasaporte, 31 NIT. */
const DOCUMENT_CODES: Record<string, string> = { CC: '13', CE: '22', PASSPORT: '41', NIT: '31' };
/** Contract types (code list 5.5.2): 1 término fijo, 2 indefinido, 4 aprendizaje. */
const CONTRACT_CODES: Record<string, string> = { fixed_term: '1', indefinite: '2', apprenticeship: '4' };

/**
 * A person's name split the Colombian way, as well as one name field allows: one or two given
 * names, then one or two surnames (four words: two and two; three: one given name and two
 * surnames; two: one and one). Longer names keep the extra words in OtrosNombres.
 */
export function splitName(name: string): { PrimerNombre: string; OtrosNombres: string; PrimerApellido: string; SegundoApellido: string } {
  const w = name.trim().split(/\s+/);
  if (w.length === 1) return { PrimerNombre: w[0], OtrosNombres: '', PrimerApellido: w[0], SegundoApellido: '' };
  if (w.length === 2) return { PrimerNombre: w[0], OtrosNombres: '', PrimerApellido: w[1], SegundoApellido: '' };
  if (w.length === 3) return { PrimerNombre: w[0], OtrosNombres: '', PrimerApellido: w[1], SegundoApellido: w[2] };
  return { PrimerNombre: w[0], OtrosNombres: w.slice(1, -2).join(' '), PrimerApellido: w[w.length - 2], SegundoApellido: w[w.length - 1] };
}

/** Which annex element an hour line goes to (HED 25 %, HEN 75 %, HRN 35 %, HEDDF, HRDDF, HENDF, HRNDF). */
const HOUR_ELEMENTS: Record<string, string> = {
  overtime_day: 'HED', overtime_night: 'HEN', night: 'HRN', overtime_day_sunday_holiday: 'HEDDF',
  sunday_holiday: 'HRDDF', overtime_night_sunday_holiday: 'HENDF', sunday_holiday_night: 'HRNDF',
};
const HOUR_ORDER = ['HED', 'HEN', 'HRN', 'HEDDF', 'HRDDF', 'HENDF', 'HRNDF'];

/** The percentage the annex wants for an hour line: the surcharge over the ordinary hour (a 125 % overtime hour is 25.00). */
function hourPercent(l: PayrollLine): string {
  const factor = l.rate_ppm ?? 0;
  const surcharge = l.concept.startsWith('overtime') ? factor - 1_000_000 : factor;
  return (surcharge / 10_000).toFixed(2);
}

/** Commercial days (30 a month) from `from` to `to`, inclusive. */
function commercialDays(from: string, to: string): number {
  let days = 0;
  for (let d = from; d <= to; d = new Date(Date.parse(`${d}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10)) days += commercialWeight(d);
  return days;
}

export interface BuiltDocument { xml: string; cune: string; cune_input: string; number: string; totals: { devengados: number; deducciones: number; comprobante: number } }

/**
 * The Nómina Individual of one employee for one month from the month's posted runs (a monthly
 * run, or both halves), with the final settlement when the contract ended in the month.
 */
export function buildNominaIndividual(args: {
  runs: readonly RunDoc[]; employee: EmployeeDoc; settings: EpayrollSettingsDoc; consecutive: number; now: Date;
  /** Shape it for a signature (epayroll_certificate.ts): the ds/xades namespaces on the root and an empty `ext:UBLExtension` first. */
  signed?: boolean;
  /**
   * Build it as an adjustment note that replaces `replaces` (NominaIndividualDeAjuste, TipoXML
   * 103, TipoNota 1: the same content under Reemplazar, after ReemplazandoPredecesor).
   */
  replaces?: Predecessor;
}): BuiltDocument {
  const { runs, employee: e, settings: s, now } = args;
  const slips = runs.map((r) => r.payslips.find((p) => p.employee_id === e._id)).filter((p) => !!p);
  if (!slips.length) throw new CuadraError('not_found', `Employee ${e._id} was not paid in these runs.`, { field: '/employee_id' });
  const docType = DOCUMENT_CODES[e.document.type];
  const contract = CONTRACT_CODES[e.contract_type];
  if (!contract) throw new CuadraError('invalid_input', 'A contract for services is not employment: it has no electronic payroll document.', { field: '/employee_id' });
  if (!/^\d+$/.test(e.document.number)) throw new CuadraError('invalid_input', `The annex wants a numeric document number (NumeroDocumento); ${e.document.number} is not.`, { field: '/employee_id' });

  const earnings = slips.flatMap((p) => p.result.earnings);
  const contributions = slips.flatMap((p) => p.result.employee_contributions);
  const deductions = slips.flatMap((p) => p.result.deductions);
  const sum = (ls: readonly PayrollLine[], c: string) => ls.filter((l) => l.concept === c).reduce((t, l) => t + l.amount, 0);
  const daysWorked = slips.reduce((t, p) => t + p.result.days_worked, 0);
  const from = slips.map((p) => p.result.period.from).sort()[0];
  const to = slips.map((p) => p.result.period.to).sort().at(-1)!;
  const month = runs[0].month;
  const retired = e.termination && e.termination.date.startsWith(month) ? e.termination : null;
  // The settlement as the run of the last day carried it into the books (the same figures); runs
  // computed before settlements reached the books did not carry one: the employee's record then.
  const carried = slips.find((p) => p.settlement)?.settlement;
  const settlement: Partial<Record<SettlementConcept, { amount: number; days: number }>> = retired
    ? Object.fromEntries((carried ?? retired.settlement).lines.map((l) => [l.concept, l]))
    : {};

  const number = `${s.prefix}${args.consecutive}`;
  const genDate = localDate(now);
  const genTime = `${new Date(now.getTime() - 5 * 3_600_000).toISOString().slice(11, 19)}-05:00`;
  const salaryOn = [...(e.salary_history ?? [{ amount: e.salary.amount, effective_from: e.hire_date }])].filter((h) => h.effective_from <= to).at(-1)?.amount ?? e.salary.amount;

  // Devengados, in the XSD's order.
  const dev: Record<string, unknown> = {
    Basico: { '@_DiasTrabajados': String(daysWorked), '@_SueldoTrabajado': decimalAmount(sum(earnings, 'salary')) },
  };
  let devTotal = sum(earnings, 'salary');
  const transport = sum(earnings, 'transport_allowance');
  if (transport) { dev.Transporte = { '@_AuxilioTransporte': decimalAmount(transport) }; devTotal += transport; }
  for (const el of HOUR_ORDER) {
    const lines = earnings.filter((l) => HOUR_ELEMENTS[l.concept] === el);
    if (!lines.length) continue;
    dev[`${el}s`] = { [el]: lines.map((l) => ({ '@_Cantidad': String(l.hours), '@_Porcentaje': hourPercent(l), '@_Pago': decimalAmount(l.amount) })) };
    devTotal += lines.reduce((t, l) => t + l.amount, 0);
  }
  const vacations = earnings.filter((l) => l.concept === 'vacations');
  const vacComp = settlement.vacations;
  if (vacations.length || vacComp) {
    dev.Vacaciones = {
      ...(vacations.length ? { VacacionesComunes: vacations.map((l) => ({ '@_Cantidad': String(l.days ?? 0), '@_Pago': decimalAmount(l.amount) })) } : {}),
      ...(vacComp ? { VacacionesCompensadas: { '@_Cantidad': String(Math.round((vacComp.days * 15) / 360)), '@_Pago': decimalAmount(vacComp.amount) } } : {}),
    };
    devTotal += vacations.reduce((t, l) => t + l.amount, 0) + (vacComp?.amount ?? 0);
  }
  if (settlement.service_bonus) {
    dev.Primas = { '@_Cantidad': String(settlement.service_bonus.days), '@_Pago': decimalAmount(settlement.service_bonus.amount) };
    devTotal += settlement.service_bonus.amount;
  }
  if (settlement.severance) {
    dev.Cesantias = { '@_Pago': decimalAmount(settlement.severance.amount), '@_Porcentaje': '12.00', '@_PagoIntereses': decimalAmount(settlement.severance_interest?.amount ?? 0) };
    devTotal += settlement.severance.amount + (settlement.severance_interest?.amount ?? 0);
  }
  const sick = earnings.filter((l) => l.concept === 'sick_leave');
  if (sick.length) {
    // Tipo 1: incapacidad común (code list 5.5.6).
    dev.Incapacidades = { Incapacidad: sick.map((l) => ({ '@_Cantidad': String(l.days ?? 0), '@_Tipo': '1', '@_Pago': decimalAmount(l.amount) })) };
    devTotal += sick.reduce((t, l) => t + l.amount, 0);
  }
  const bonusS = sum(earnings, 'bonus_salary');
  const bonusNS = sum(earnings, 'bonus_non_salary');
  if (bonusS || bonusNS) {
    dev.Bonificaciones = { Bonificacion: { ...(bonusS ? { '@_BonificacionS': decimalAmount(bonusS) } : {}), ...(bonusNS ? { '@_BonificacionNS': decimalAmount(bonusNS) } : {}) } };
    devTotal += bonusS + bonusNS;
  }
  const commissions = sum(earnings, 'commissions');
  if (commissions) { dev.Comisiones = { Comision: decimalAmount(commissions) }; devTotal += commissions; }
  // CST art. 64 (settlement.ts): the annex's Indemnizacion, last but Reintegro in Devengados.
  if (settlement.indemnity) { dev.Indemnizacion = decimalAmount(settlement.indemnity.amount); devTotal += settlement.indemnity.amount; }
  const placed = new Set(['salary', 'transport_allowance', 'vacations', 'sick_leave', 'bonus_salary', 'bonus_non_salary', 'commissions', ...Object.keys(HOUR_ELEMENTS)]);
  const unplaced = earnings.find((l) => !placed.has(l.concept));
  if (unplaced) throw new CuadraError('internal', `No annex element for the earning ${unplaced.concept}.`);

  // Deducciones: Salud and FondoPension are required; FondoSP when the solidarity fund applies.
  const rateOf = (c: string) => { const l = contributions.find((x) => x.concept === c); return ((l?.rate_ppm ?? 40_000) / 10_000).toFixed(2); };
  const health = sum(contributions, 'health');
  const pension = sum(contributions, 'pension');
  const solidarity = sum(contributions, 'solidarity_fund');
  const ded: Record<string, unknown> = {
    Salud: { '@_Porcentaje': rateOf('health'), '@_Deduccion': decimalAmount(health) },
    FondoPension: { '@_Porcentaje': rateOf('pension'), '@_Deduccion': decimalAmount(pension) },
  };
  if (solidarity) ded.FondoSP = { '@_Porcentaje': rateOf('solidarity_fund'), '@_DeduccionSP': decimalAmount(solidarity) };
  let dedTotal = health + pension + solidarity;
  if (deductions.length) {
    ded.OtrasDeducciones = { OtraDeduccion: deductions.map((l) => decimalAmount(l.amount)) };
    dedTotal += deductions.reduce((t, l) => t + l.amount, 0);
  }
  const total = devTotal - dedTotal;

  const parts: CuneParts = {
    NumNE: number, FecNE: genDate, HorNE: genTime, ValDev: decimalAmount(devTotal), ValDed: decimalAmount(dedTotal), ValTolNE: decimalAmount(total),
    NitNE: s.nit, DocEmp: e.document.number, TipoXML: args.replaces ? TIPO_XML_AJUSTE : TIPO_XML_NOMINA, SoftwarePin: s.software_pin, TipAmb: s.environment,
  };
  const key = cune(parts);
  const names = splitName(e.name);
  const qrBase = s.environment === '1' ? 'https://catalogo-vpfe.dian.gov.co' : 'https://catalogo-vpfe-hab.dian.gov.co';
  const body = {
      Periodo: {
        '@_FechaIngreso': e.hire_date, ...(retired ? { '@_FechaRetiro': retired.date } : {}),
        '@_FechaLiquidacionInicio': from, '@_FechaLiquidacionFin': to,
        '@_TiempoLaborado': String(commercialDays(e.hire_date, to)), '@_FechaGen': genDate,
      },
      NumeroSecuenciaXML: { '@_CodigoTrabajador': e.document.number, '@_Prefijo': s.prefix, '@_Consecutivo': String(args.consecutive), '@_Numero': number },
      LugarGeneracionXML: { '@_Pais': 'CO', '@_DepartamentoEstado': s.department, '@_MunicipioCiudad': s.municipality, '@_Idioma': 'es' },
      ProveedorXML: { '@_RazonSocial': s.company_name, '@_NIT': s.nit, '@_DV': String(s.dv), '@_SoftwareID': s.software_id, '@_SoftwareSC': sha384(s.software_id + s.software_pin + number) },
      CodigoQR: `${qrBase}/document/searchqr?documentkey=${key}`,
      InformacionGeneral: {
        '@_Version': 'V1.0: Documento Soporte de Pago de Nómina Electrónica', '@_Ambiente': s.environment, '@_TipoXML': args.replaces ? TIPO_XML_AJUSTE : TIPO_XML_NOMINA,
        '@_CUNE': key, '@_EncripCUNE': 'CUNE-SHA384', '@_FechaGen': genDate, '@_HoraGen': genTime,
        // Code list 5.5.1: 4 quincenal, 5 mensual.
        '@_PeriodoNomina': runs.some((r) => r.frequency === 'monthly') ? '5' : '4', '@_TipoMoneda': 'COP',
      },
      Empleador: {
        '@_RazonSocial': s.company_name, '@_NIT': s.nit, '@_DV': String(s.dv), '@_Pais': 'CO',
        '@_DepartamentoEstado': s.department, '@_MunicipioCiudad': s.municipality, '@_Direccion': s.address,
      },
      Trabajador: {
        // 01 dependiente, 00 no aplica (code lists 5.5.3, 5.5.4).
        '@_TipoTrabajador': '01', '@_SubTipoTrabajador': '00', '@_AltoRiesgoPension': 'false', '@_TipoDocumento': docType,
        '@_NumeroDocumento': e.document.number, '@_PrimerApellido': names.PrimerApellido, '@_SegundoApellido': names.SegundoApellido,
        '@_PrimerNombre': names.PrimerNombre, ...(names.OtrosNombres ? { '@_OtrosNombres': names.OtrosNombres } : {}),
        '@_LugarTrabajoPais': 'CO', '@_LugarTrabajoDepartamentoEstado': s.department, '@_LugarTrabajoMunicipioCiudad': s.municipality,
        '@_LugarTrabajoDireccion': s.address, '@_SalarioIntegral': 'false', '@_TipoContrato': contract, '@_Sueldo': decimalAmount(salaryOn),
        '@_CodigoTrabajador': e.document.number,
      },
      // Forma 1: contado.
      Pago: { '@_Forma': '1', '@_Metodo': s.payment_method },
      FechasPagos: { FechaPago: runs.map((r) => localDate(r.posted_at ?? now)) },
      Devengados: dev,
      Deducciones: ded,
      DevengadosTotal: decimalAmount(devTotal),
      DeduccionesTotal: decimalAmount(dedTotal),
      ComprobanteTotal: decimalAmount(total),
  };
  const doc = args.replaces
    ? wrap(NOMINA_AJUSTE_NS, 'NominaIndividualDeAjusteElectronicaXSD.xsd', !!args.signed, {
      TipoNota: '1',
      Reemplazar: { ReemplazandoPredecesor: predecessorAttributes(args.replaces), ...body },
    }, 'NominaIndividualDeAjuste')
    : wrap(NOMINA_NS, 'NominaIndividualElectronicaXSD.xsd', !!args.signed, body, 'NominaIndividual');
  const xml = new XMLBuilder({ ignoreAttributes: false, attributeNamePrefix: '@_', format: true, suppressEmptyNode: true }).build(doc) as string;
  return { xml, cune: key, cune_input: cuneInput(parts), number, totals: { devengados: devTotal, deducciones: dedTotal, comprobante: total } };
}

/** The document whose place an adjustment note takes: its number, CUNE and generation date. */
export interface Predecessor { number: string; cune: string; date: string }

function predecessorAttributes(p: Predecessor) {
  return { '@_NumeroPred': p.number, '@_CUNEPred': p.cune, '@_FechaGenPred': p.date };
}

/** The root element of a payroll document with its namespaces, SchemaLocation and, when signed, the signature's extension. */
function wrap(ns: string, xsd: string, signed: boolean, content: Record<string, unknown>, root: string) {
  return {
    '?xml': { '@_version': '1.0', '@_encoding': 'UTF-8' },
    [root]: {
      '@_xmlns': ns,
      '@_xmlns:ext': 'urn:oasis:names:specification:ubl:schema:xsd:CommonExtensionComponents-2',
      '@_xmlns:xsi': 'http://www.w3.org/2001/XMLSchema-instance',
      // The XSD requires a SchemaLocation attribute on the root (empty, as DIAN's own examples have it).
      '@_SchemaLocation': '',
      '@_xsi:schemaLocation': `${ns} ${xsd}`,
      ...(signed ? { ...SIGNATURE_ROOT_ATTRIBUTES, 'ext:UBLExtensions': SIGNATURE_EXTENSION } : {}),
      ...content,
    },
  };
}

/**
 * The adjustment note that deletes `deletes` (NominaIndividualDeAjuste, TipoXML 103, TipoNota 2:
 * Eliminar with EliminandoPredecesor, the numbering, provider, QR, general information, notes and
 * employer — no worker and no amounts). Its CUNE hashes the amounts as 0.00 and the worker's
 * document as 0 (the annex's rule for a deletion, as open implementations apply it; not re-read
 * in the annex here).
 */
export function buildEliminar(args: { deletes: Predecessor; settings: EpayrollSettingsDoc; consecutive: number; now: Date; reason?: string; signed?: boolean }): BuiltDocument {
  const { settings: s, now } = args;
  const number = `${s.prefix}${args.consecutive}`;
  const genDate = localDate(now);
  const genTime = `${new Date(now.getTime() - 5 * 3600_000).toISOString().slice(11, 19)}-05:00`;
  const parts: CuneParts = {
    NumNE: number, FecNE: genDate, HorNE: genTime, ValDev: '0.00', ValDed: '0.00', ValTolNE: '0.00',
    NitNE: s.nit, DocEmp: '0', TipoXML: TIPO_XML_AJUSTE, SoftwarePin: s.software_pin, TipAmb: s.environment,
  };
  const key = cune(parts);
  const qrBase = s.environment === '1' ? 'https://catalogo-vpfe.dian.gov.co' : 'https://catalogo-vpfe-hab.dian.gov.co';
  const doc = wrap(NOMINA_AJUSTE_NS, 'NominaIndividualDeAjusteElectronicaXSD.xsd', !!args.signed, {
    TipoNota: '2',
    Eliminar: {
      EliminandoPredecesor: predecessorAttributes(args.deletes),
      NumeroSecuenciaXML: { '@_Prefijo': s.prefix, '@_Consecutivo': String(args.consecutive), '@_Numero': number },
      LugarGeneracionXML: { '@_Pais': 'CO', '@_DepartamentoEstado': s.department, '@_MunicipioCiudad': s.municipality, '@_Idioma': 'es' },
      ProveedorXML: { '@_RazonSocial': s.company_name, '@_NIT': s.nit, '@_DV': String(s.dv), '@_SoftwareID': s.software_id, '@_SoftwareSC': sha384(s.software_id + s.software_pin + number) },
      CodigoQR: `${qrBase}/document/searchqr?documentkey=${key}`,
      InformacionGeneral: {
        '@_Version': 'V1.0: Nota de Ajuste de Documento Soporte de Pago de Nómina Electrónica', '@_Ambiente': s.environment, '@_TipoXML': TIPO_XML_AJUSTE,
        '@_CUNE': key, '@_EncripCUNE': 'CUNE-SHA384', '@_FechaGen': genDate, '@_HoraGen': genTime,
      },
      ...(args.reason ? { Notas: args.reason } : {}),
      Empleador: {
        '@_RazonSocial': s.company_name, '@_NIT': s.nit, '@_DV': String(s.dv), '@_Pais': 'CO',
        '@_DepartamentoEstado': s.department, '@_MunicipioCiudad': s.municipality, '@_Direccion': s.address,
      },
    },
  }, 'NominaIndividualDeAjuste');
  const xml = new XMLBuilder({ ignoreAttributes: false, attributeNamePrefix: '@_', format: true, suppressEmptyNode: true }).build(doc) as string;
  return { xml, cune: key, cune_input: cuneInput(parts), number, totals: { devengados: 0, deducciones: 0, comprobante: 0 } };
}
