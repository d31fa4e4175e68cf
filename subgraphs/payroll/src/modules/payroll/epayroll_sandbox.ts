import { randomUUID } from 'node:crypto';
import { parseXml, XmlError } from '@cuadra/shared/xml';
import { XMLParser } from 'fast-xml-parser';
import type { Connection } from 'mongoose';
import { nitCheckDigit, type AuthorityAnswer } from '@cuadra/shared/dian';
import { cune, NOMINA_AJUSTE_NS, NOMINA_NS, sha384, TIPO_XML_AJUSTE, TIPO_XML_NOMINA, type EpayrollSettingsDoc } from './epayroll.ts';
import { epayrollCertificates, verifyPayrollXml } from './epayroll_certificate.ts';

/**
 * THE BUILT-IN SANDBOX — not DIAN. It answers a Nómina Individual the way DIAN's habilitación
 * (test) environment answers one, in the parts that can be checked without DIAN: well-formed
 * XML, the required elements of the annex's XSD, the test environment (Ambiente 2), a software
 * registered for the employer's NIT, the NIT's check digit, SoftwareSC, totals that add up, and
 * the CUNE recomputed from the document and the software PIN (DIAN's rule NIE024), and the
 * XAdES-EPES signature against the employer's registered certificate (FAA02, ZE02). It does not
 * check anything DIAN knows and we do not.
 */

/**
 * The issuer the sandbox knows for a software id and NIT (its habilitación), or null; with the
 * signing certificate it registered (`cert_pem`), if any.
 */
export type EpayrollIssuerLookup = (softwareId: string, nit: string) => Promise<(Pick<EpayrollSettingsDoc, 'software_id' | 'software_pin' | 'nit'> & { cert_pem?: string | null }) | null>;

/** The lookup of the workspace's own habilitación: its settings and its payroll certificate. */
export function issuerLookup(db: Connection, workspace: string, settings: EpayrollSettingsDoc): EpayrollIssuerLookup {
  return async (softwareId, nit) => {
    if (softwareId !== settings.software_id || nit !== settings.nit) return null;
    const cert = await epayrollCertificates(db).findById(workspace, { cert_pem: 1 }).lean();
    return { ...settings, cert_pem: cert?.cert_pem ?? null };
  };
}

/**
 * The signature rule: an employer that registered a certificate must sign (FAA02 when the
 * document has none), and a signature must hold against that certificate (ZE02: a changed
 * document, a foreign certificate, a wrong policy…); a signature from an employer with no
 * registered certificate cannot be checked and is refused too.
 */
export function signatureErrors(xml: string, certPem: string | null | undefined): string[] {
  if (!certPem) return xml.includes('http://www.w3.org/2000/09/xmldsig#') ? ['ZE02: valor de la firma inválido: el empleador no tiene certificado de firma registrado.'] : [];
  const checked = verifyPayrollXml(xml, certPem);
  if (checked.ok) return [];
  if (checked.missing) return ['FAA02: el documento debe llevar ext:UBLExtension/ext:ExtensionContent/ds:Signature (el empleador tiene certificado de firma registrado).'];
  return [`ZE02: valor de la firma inválido: ${checked.problem}`];
}

type Node = Record<string, unknown>;
const parser = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@_', parseAttributeValue: false, parseTagValue: false, removeNSPrefix: false, isArray: () => false });

/** Money text with two decimals as centavos, or NaN. */
function centavos(v: unknown): number {
  const s = typeof v === 'string' ? v.trim() : typeof v === 'object' && v && '#text' in v ? String((v as Node)['#text']).trim() : '';
  if (!/^-?\d+\.\d{2}$/.test(s)) return NaN;
  const neg = s.startsWith('-');
  const [w, f] = s.replace('-', '').split('.');
  return (neg ? -1 : 1) * (Number(w) * 100 + Number(f));
}
const attr = (n: unknown, name: string): string => (n && typeof n === 'object' ? String((n as Node)[`@_${name}`] ?? '') : '');
const asList = (v: unknown): unknown[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

/** Money attributes of earnings and deductions (the annex's names). */
const EARNING_MONEY = ['SueldoTrabajado', 'AuxilioTransporte', 'ViaticoManuAlojS', 'ViaticoManuAlojNS', 'Pago', 'PagoNS', 'PagoIntereses', 'BonificacionS', 'BonificacionNS', 'AuxilioS', 'AuxilioNS', 'ConceptoS', 'ConceptoNS', 'CompensacionO', 'CompensacionE', 'PagoS', 'PagoAlimentacionS', 'PagoAlimentacionNS'];
const DEDUCTION_MONEY = ['Deduccion', 'DeduccionSP', 'DeduccionSub', 'SancionPublic', 'SancionPriv'];
/** Elements whose text is an amount. */
const MONEY_TEXT_EARNINGS = ['Comision', 'PagoTercero', 'Anticipo', 'Dotacion', 'ApoyoSost', 'Teletrabajo', 'BonifRetiro', 'Indemnizacion', 'Reintegro'];
const MONEY_TEXT_DEDUCTIONS = ['PagoTercero', 'Anticipo', 'OtraDeduccion', 'PensionVoluntaria', 'RetencionFuente', 'AFC', 'Cooperativa', 'EmbargoFiscal', 'PlanComplementarios', 'Educacion', 'Reintegro', 'Deuda'];

function sumMoney(node: unknown, attrs: readonly string[], texts: readonly string[], name = ''): number {
  let total = 0;
  for (const item of asList(node)) {
    if (item === null || item === undefined) continue;
    if (typeof item !== 'object') { if (texts.includes(name)) total += centavos(item); continue; }
    const n = item as Node;
    if (texts.includes(name) && '#text' in n) total += centavos(n);
    for (const a of attrs) if (`@_${a}` in n) total += centavos(n[`@_${a}`]);
    for (const [k, v] of Object.entries(n)) if (!k.startsWith('@_') && k !== '#text') total += sumMoney(v, attrs, texts, k);
  }
  return total;
}

/** Validates a Nómina Individual as the habilitación environment would, in the parts listed above. */
export async function validateNomina(xml: string, lookup: EpayrollIssuerLookup): Promise<{ errors: string[]; key: string | null; number: string | null }> {
  // The product's one hardened XML reader first (shared/src/xml.ts): a DOCTYPE or anything not well-formed is refused before it is read.
  try {
    parseXml(xml);
  } catch (err) {
    if (!(err instanceof XmlError)) throw err;
    return { errors: [`XML mal formado o no admitido: ${err.message}`], key: null, number: null };
  }
  const parsed = parser.parse(xml) as Node;
  const errors: string[] = [];
  let root = parsed.NominaIndividual as Node | undefined;
  let tipoXml = TIPO_XML_NOMINA;
  if (!root && parsed.NominaIndividualDeAjuste) {
    // An adjustment note (TipoXML 103): TipoNota 1 replaces its predecessor (the same content
    // under Reemplazar), 2 deletes it (Eliminar, no worker and no amounts).
    const note = parsed.NominaIndividualDeAjuste as Node;
    if (note['@_xmlns'] !== NOMINA_AJUSTE_NS) errors.push(`NIAE: el espacio de nombres debe ser ${NOMINA_AJUSTE_NS}.`);
    const tipoNota = String(note.TipoNota ?? '').trim();
    const body = (tipoNota === '1' ? note.Reemplazar : tipoNota === '2' ? note.Eliminar : undefined) as Node | undefined;
    if (!body || (note.Reemplazar && note.Eliminar)) return { errors: [...errors, 'NIAE: TipoNota debe ser 1 (Reemplazar) o 2 (Eliminar), con solo ese elemento.'], key: null, number: null };
    const pred = (body.ReemplazandoPredecesor ?? body.EliminandoPredecesor) as unknown;
    if (!pred || !/^[0-9a-f]{96}$/.test(attr(pred, 'CUNEPred')) || !attr(pred, 'NumeroPred') || !/^\d{4}-\d{2}-\d{2}$/.test(attr(pred, 'FechaGenPred'))) {
      errors.push('NIAE: el predecesor debe llevar NumeroPred, CUNEPred (SHA-384) y FechaGenPred.');
    }
    if (tipoNota === '2') return deletionChecks(xml, body, errors, lookup);
    root = body;
    tipoXml = TIPO_XML_AJUSTE;
  }
  if (!root) return { errors: ['NIE: la raíz debe ser NominaIndividual o NominaIndividualDeAjuste.'], key: null, number: null };
  if (tipoXml === TIPO_XML_NOMINA && root['@_xmlns'] !== NOMINA_NS) errors.push(`NIE: el espacio de nombres debe ser ${NOMINA_NS}.`);
  const required = ['Periodo', 'NumeroSecuenciaXML', 'LugarGeneracionXML', 'ProveedorXML', 'CodigoQR', 'InformacionGeneral', 'Empleador', 'Trabajador', 'Pago', 'FechasPagos', 'Devengados', 'Deducciones', 'DevengadosTotal', 'DeduccionesTotal', 'ComprobanteTotal'];
  for (const r of required) if (!(r in root)) errors.push(`NIE: falta el elemento requerido ${r}.`);
  if (errors.length) return { errors, key: null, number: null };
  const dev = root.Devengados as Node;
  const ded = root.Deducciones as Node;
  if (!dev.Basico) errors.push('NIE: falta Devengados/Basico.');
  if (!ded.Salud || !ded.FondoPension) errors.push('NIE: faltan Deducciones/Salud o Deducciones/FondoPension.');

  const info = root.InformacionGeneral;
  const seq = root.NumeroSecuenciaXML;
  const prov = root.ProveedorXML;
  const employer = root.Empleador;
  const worker = root.Trabajador;
  const number = attr(seq, 'Numero');
  if (attr(info, 'TipoXML') !== tipoXml) errors.push(tipoXml === TIPO_XML_NOMINA ? 'NIE: TipoXML debe ser 102 (Nómina Individual).' : 'NIAE: TipoXML debe ser 103 (Nota de Ajuste).');
  if (attr(info, 'Ambiente') !== '2') errors.push('NIE: este es el ambiente de habilitación (pruebas): Ambiente debe ser 2.');
  if (attr(info, 'EncripCUNE') !== 'CUNE-SHA384') errors.push('NIE: EncripCUNE debe ser CUNE-SHA384.');
  if (!/^\d{4}-\d{2}-\d{2}$/.test(attr(info, 'FechaGen'))) errors.push('NIE: FechaGen no es una fecha AAAA-MM-DD.');
  if (!/^\d{2}:\d{2}:\d{2}[-+]\d{2}:\d{2}$/.test(attr(info, 'HoraGen'))) errors.push('NIE: HoraGen debe llevar zona horaria (HH:MM:SS-05:00).');
  if (number !== `${attr(seq, 'Prefijo')}${attr(seq, 'Consecutivo')}`) errors.push('NIE: Numero debe ser Prefijo seguido de Consecutivo.');
  const nit = attr(employer, 'NIT');
  if (!/^\d+$/.test(nit) || String(nitCheckDigit(nit)) !== attr(employer, 'DV')) errors.push('NIE: el DV del empleador no corresponde a su NIT.');

  const devTotal = centavos(root.DevengadosTotal);
  const dedTotal = centavos(root.DeduccionesTotal);
  const total = centavos(root.ComprobanteTotal);
  const devSum = sumMoney(dev, EARNING_MONEY, MONEY_TEXT_EARNINGS);
  const dedSum = sumMoney(ded, DEDUCTION_MONEY, MONEY_TEXT_DEDUCTIONS);
  if ([devTotal, dedTotal, total, devSum, dedSum].some(Number.isNaN)) errors.push('NIE: importes con formato inválido (se esperan dos decimales).');
  else {
    if (devSum !== devTotal) errors.push(`NIE: DevengadosTotal (${devTotal}) no es la suma de los devengados (${devSum}).`);
    if (dedSum !== dedTotal) errors.push(`NIE: DeduccionesTotal (${dedTotal}) no es la suma de las deducciones (${dedSum}).`);
    if (devTotal - dedTotal !== total) errors.push('NIE: ComprobanteTotal no es DevengadosTotal menos DeduccionesTotal.');
  }

  const issuer = await lookup(attr(prov, 'SoftwareID'), nit);
  if (!issuer) {
    errors.push('NIE: el software o el empleador no están habilitados para nómina electrónica.');
    return { errors, key: null, number };
  }
  if (attr(prov, 'SoftwareSC') !== sha384(issuer.software_id + issuer.software_pin + number)) errors.push('NIE: SoftwareSC no corresponde al software, su PIN y el número.');
  const key = Number.isNaN(devTotal) || Number.isNaN(dedTotal) || Number.isNaN(total) ? null : cune({
    NumNE: number, FecNE: attr(info, 'FechaGen'), HorNE: attr(info, 'HoraGen'),
    ValDev: String(root.DevengadosTotal).trim(), ValDed: String(root.DeduccionesTotal).trim(), ValTolNE: String(root.ComprobanteTotal).trim(),
    NitNE: nit, DocEmp: attr(worker, 'NumeroDocumento'), TipoXML: attr(info, 'TipoXML'), SoftwarePin: issuer.software_pin, TipAmb: attr(info, 'Ambiente'),
  });
  if (key && key !== attr(info, 'CUNE')) errors.push('NIE024: el CUNE no corresponde a los datos del documento.');
  if (key && !String(root.CodigoQR).includes(key)) errors.push('NIE: CodigoQR no lleva el CUNE del documento.');
  errors.push(...signatureErrors(xml, issuer.cert_pem));
  return { errors, key, number };
}

/** The checks of a deleting note (Eliminar): its numbering, employer, software, CUNE over zero amounts, QR and signature. */
async function deletionChecks(xml: string, body: Node, errors: string[], lookup: EpayrollIssuerLookup): Promise<{ errors: string[]; key: string | null; number: string | null }> {
  for (const r of ['NumeroSecuenciaXML', 'LugarGeneracionXML', 'ProveedorXML', 'CodigoQR', 'InformacionGeneral', 'Empleador']) if (!(r in body)) errors.push(`NIAE: falta el elemento requerido Eliminar/${r}.`);
  if (errors.length) return { errors, key: null, number: null };
  const info = body.InformacionGeneral;
  const seq = body.NumeroSecuenciaXML;
  const number = attr(seq, 'Numero');
  if (attr(info, 'TipoXML') !== TIPO_XML_AJUSTE) errors.push('NIAE: TipoXML debe ser 103 (Nota de Ajuste).');
  if (attr(info, 'Ambiente') !== '2') errors.push('NIAE: este es el ambiente de habilitación (pruebas): Ambiente debe ser 2.');
  if (attr(info, 'EncripCUNE') !== 'CUNE-SHA384') errors.push('NIAE: EncripCUNE debe ser CUNE-SHA384.');
  if (number !== `${attr(seq, 'Prefijo')}${attr(seq, 'Consecutivo')}`) errors.push('NIAE: Numero debe ser Prefijo seguido de Consecutivo.');
  const nit = attr(body.Empleador, 'NIT');
  if (!/^\d+$/.test(nit) || String(nitCheckDigit(nit)) !== attr(body.Empleador, 'DV')) errors.push('NIAE: el DV del empleador no corresponde a su NIT.');
  const issuer = await lookup(attr(body.ProveedorXML, 'SoftwareID'), nit);
  if (!issuer) return { errors: [...errors, 'NIAE: el software o el empleador no están habilitados para nómina electrónica.'], key: null, number };
  if (attr(body.ProveedorXML, 'SoftwareSC') !== sha384(issuer.software_id + issuer.software_pin + number)) errors.push('NIAE: SoftwareSC no corresponde al software, su PIN y el número.');
  const key = cune({
    NumNE: number, FecNE: attr(info, 'FechaGen'), HorNE: attr(info, 'HoraGen'), ValDev: '0.00', ValDed: '0.00', ValTolNE: '0.00',
    NitNE: nit, DocEmp: '0', TipoXML: attr(info, 'TipoXML'), SoftwarePin: issuer.software_pin, TipAmb: attr(info, 'Ambiente'),
  });
  if (key !== attr(info, 'CUNE')) errors.push('NIAE024: el CUNE no corresponde a los datos de la nota.');
  if (!String(body.CodigoQR).includes(key)) errors.push('NIAE: CodigoQR no lleva el CUNE de la nota.');
  errors.push(...signatureErrors(xml, issuer.cert_pem));
  return { errors, key, number };
}

/** The sandbox's answer to one submission, shaped like DIAN's (status 00 accepted, 99 rejected). */
export async function sandboxAnswer(xml: string, lookup: EpayrollIssuerLookup): Promise<AuthorityAnswer> {
  const { errors, key } = await validateNomina(xml, lookup);
  if (errors.length) return { is_valid: false, status_code: '99', status_description: 'Documento con errores en campos mandatorios. (Sandbox de Cuadra, no DIAN)', document_key: key, track_id: null, errors };
  return { is_valid: true, status_code: '00', status_description: 'Procesado Correctamente. (Sandbox de Cuadra, no DIAN)', document_key: key, track_id: randomUUID(), errors: [] };
}
