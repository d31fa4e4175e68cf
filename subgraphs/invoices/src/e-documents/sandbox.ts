import { modelOn } from '@cuadra/shared';
import type { AuthorityAnswer } from '@cuadra/shared/dian';
import { randomUUID } from 'node:crypto';
import { Schema, type Connection, type Model } from 'mongoose';
import { openSettings, rangeOf, settings, type SettingsDoc } from '../lib/settings.ts';
import { applicationResponseXml } from './attached.ts';
import { certificates } from './certificate.ts';
import { cufe } from './cufe.ts';
import { softwareSecurityCode } from './ubl.ts';
import { verifyUbl } from './xades.ts';
import { child, childrenNamed, parseXml, textOf, UBL_NS, ublRootNs, XmlError, type XmlElement } from './xml.ts';
import { cents, documentRules, findingText, rulePrefix, type DianKind, type RuleFinding } from './dian-rules.ts';

/**
 * What the sandbox needs to know of a registered issuer (its habilitación): the keys, and the
 * signing certificate it registered (PEM), if any: then every document must carry a valid signature by it.
 */
export type IssuerLookup = (softwareId: string, nit: string) => Promise<(Pick<SettingsDoc, 'technical_key' | 'software_pin' | 'software_id' | 'numbering' | 'environment'> & { certificate_pem?: string | null }) | null>;

/** Sums the document-level TaxTotal amounts of one tax scheme (01 IVA, 04 INC, 03 ICA). */
function taxOf(root: XmlElement, scheme: string): number {
  let sum = 0;
  for (const total of childrenNamed(root, 'cac:TaxTotal')) {
    for (const sub of childrenNamed(total, 'cac:TaxSubtotal')) {
      if (textOf(child(sub, 'cac:TaxCategory/cac:TaxScheme/cbc:ID')).trim() === scheme) sum += cents(child(sub, 'cbc:TaxAmount')) ?? 0;
    }
  }
  return sum;
}

/** Which DIAN document a UBL root is (by namespace and name), or null. */
function documentKind(root: XmlElement): DianKind | null {
  for (const [name, kind] of [['Invoice', 'invoice'], ['CreditNote', 'credit_note'], ['DebitNote', 'debit_note']] as const) {
    if (root.localName === name && root.namespaceURI === ublRootNs(name)) return kind;
  }
  return null;
}

/** The date of a signature's xades:SigningTime as written (its local date), or null when unsigned. */
function signingDate(root: XmlElement): string | null {
  const el = Array.from(root.getElementsByTagNameNS(UBL_NS.xades, 'SigningTime'))[0] as XmlElement | undefined;
  const m = /^(\d{4}-\d{2}-\d{2})T/.exec(textOf(el).trim());
  return m ? m[1] : null;
}

/**
 * Validates a UBL 2.1 invoice, credit note or debit note as DIAN's validation does for every field
 * this service emits (e-documents/dian-rules.ts: structure, parties, payment means, allowances and
 * charges, taxes, totals, each with DIAN's rule id), and what needs the issuer's registration: the
 * authorised range and its prefix and validity, the software security code, the CUFE/CUDE recomputed
 * with the issuer's keys, the signature by the certificate it registered, and that the document
 * was signed the day it is dated. Errors are worded as DIAN does (`Regla: FAD06, Rechazo: …`).
 * Pure apart from the issuer lookup.
 */
export async function validateDocument(xml: string, lookup: IssuerLookup): Promise<{ errors: string[]; key: string | null; number: string | null }> {
  let root: XmlElement;
  try {
    root = parseXml(xml);
  } catch (err) {
    if (err instanceof XmlError) return { errors: [`XML mal formado: ${err.message}`], key: null, number: null };
    throw err;
  }
  const kind = documentKind(root);
  if (!kind) return { errors: [`Raíz desconocida <${root.localName}> (${root.namespaceURI ?? 'sin espacio de nombres'}): se espera Invoice, CreditNote o DebitNote de UBL 2.1.`], key: null, number: null };
  const p = rulePrefix(kind);
  const isCredit = kind === 'credit_note';
  const isDebit = kind === 'debit_note';
  const isNote = isCredit || isDebit;
  const text = (path: string) => textOf(child(root, path)).trim();
  const findings: RuleFinding[] = [];
  const r = (id: string, message: string) => findings.push({ rule: `${p}${id}`, message });
  const errors = () => findings.map(findingText);

  // Without these nothing else can be read.
  const total = isDebit ? 'cac:RequestedMonetaryTotal' : 'cac:LegalMonetaryTotal';
  const required: [string, string][] = [
    ['D01', 'cbc:UBLVersionID'], ['D02', 'cbc:CustomizationID'], ['D04', 'cbc:ProfileExecutionID'], ['D05', 'cbc:ID'], ['D06', 'cbc:UUID'], ['D09', 'cbc:IssueDate'], ['D10', 'cbc:IssueTime'],
    ['D15', 'cbc:DocumentCurrencyCode'], ['J21', 'cac:AccountingSupplierParty/cac:Party/cac:PartyTaxScheme/cbc:CompanyID'], ['K21', 'cac:AccountingCustomerParty/cac:Party/cac:PartyTaxScheme/cbc:CompanyID'],
    ['U02', `${total}/cbc:LineExtensionAmount`], ['U14', `${total}/cbc:PayableAmount`], ['B19', 'ext:UBLExtensions/ext:UBLExtension/ext:ExtensionContent/sts:DianExtensions/sts:SoftwareProvider/sts:SoftwareID'],
  ];
  if (kind === 'invoice') required.push(['D11', 'cbc:InvoiceTypeCode']);
  if (isCredit) required.push(['D11', 'cbc:CreditNoteTypeCode']);
  if (isNote) required.push(['F04', 'cac:BillingReference/cac:InvoiceDocumentReference/cbc:UUID'], ['F02', 'cac:DiscrepancyResponse/cbc:ResponseCode']);
  for (const [id, path] of required) {
    // A party without its PartyTaxScheme group is J19/K19 (the group missing), not J21/K21 (its CompanyID empty).
    const group = /^[JK]21$/.test(id) ? path.slice(0, path.lastIndexOf('/')) : null;
    if (group && !child(root, group)) r(`${id[0]}19`, `No fue informado el grupo ${group}.`);
    else if (!text(path)) r(id, `No fue informado el elemento requerido ${path}.`);
  }
  if (findings.length) return { errors: errors(), key: null, number: text('cbc:ID') || null };

  if (kind === 'invoice' && text('cbc:InvoiceTypeCode') !== '01') r('D11', 'InvoiceTypeCode debe ser 01 (factura electrónica de venta).');
  if (isCredit && text('cbc:CreditNoteTypeCode') !== '91') r('D11', 'CreditNoteTypeCode debe ser 91.');
  if (isCredit && !/^[1-5]$/.test(text('cac:DiscrepancyResponse/cbc:ResponseCode'))) r('F02', 'El concepto de la nota crédito (ResponseCode) debe ser 1 a 5.');
  if (isDebit && !/^[1-4]$/.test(text('cac:DiscrepancyResponse/cbc:ResponseCode'))) r('F02', 'El concepto de la nota débito (ResponseCode) debe ser 1 a 4.');
  const environment = text('cbc:ProfileExecutionID');
  if (environment !== '2') r('D04', 'Este es el ambiente de habilitación (pruebas): ProfileExecutionID debe ser 2.');
  findings.push(...documentRules(root, kind));

  const subtotal = cents(child(root, `${total}/cbc:LineExtensionAmount`));
  const payable = cents(child(root, `${total}/cbc:PayableAmount`));
  const vat = taxOf(root, '01');
  const inc = taxOf(root, '04');
  const ica = taxOf(root, '03');

  const softwareId = text('ext:UBLExtensions/ext:UBLExtension/ext:ExtensionContent/sts:DianExtensions/sts:SoftwareProvider/sts:SoftwareID');
  const issuerNit = text('cac:AccountingSupplierParty/cac:Party/cac:PartyTaxScheme/cbc:CompanyID');
  const issuer = await lookup(softwareId, issuerNit);
  const number = text('cbc:ID');
  if (!issuer) {
    findings.push({ rule: 'FAB', message: 'El software o el emisor no están habilitados ante la DIAN.' });
    return { errors: errors(), key: null, number };
  }
  if (kind === 'invoice') {
    // The authorised numbering (sts:InvoiceControl): only invoices number from a range DIAN authorised.
    const control = 'ext:UBLExtensions/ext:UBLExtension/ext:ExtensionContent/sts:DianExtensions/sts:InvoiceControl';
    const range = rangeOf(issuer.numbering, kind);
    if (!text(`${control}/sts:InvoiceAuthorization`)) r('B05a', 'No se encuentra el número de autorización del rango de numeración otorgado');
    if (text(`${control}/sts:AuthorizedInvoices/sts:Prefix`) !== range.prefix) r('B10b', 'El prefijo no corresponde al prefijo de la autorización de numeración');
    const seq = number.startsWith(range.prefix) ? Number(number.slice(range.prefix.length)) : NaN;
    if (!Number.isInteger(seq) || seq < range.from || seq > range.to) r('D05d', `Número de factura no está contenido en el rango de numeración autorizado (${range.prefix}${range.from}–${range.to}).`);
    const start = text(`${control}/sts:AuthorizationPeriod/cbc:StartDate`);
    if (start && text('cbc:IssueDate') < start) r('D09a', 'Fecha de emisión anterior a la fecha de inicio de la autorización de la numeración');
  }
  const securityCode = text('ext:UBLExtensions/ext:UBLExtension/ext:ExtensionContent/sts:DianExtensions/sts:SoftwareSecurityCode');
  if (securityCode !== softwareSecurityCode(issuer, number)) r('B27', 'SoftwareSecurityCode no corresponde al software y su PIN.');
  const key = subtotal === null || payable === null ? null : cufe({
    number, issueDate: text('cbc:IssueDate'), issueTime: text('cbc:IssueTime'), subtotal, vat, inc, ica, total: payable,
    issuerNit, buyerId: text('cac:AccountingCustomerParty/cac:Party/cac:PartyTaxScheme/cbc:CompanyID'),
    key: isNote ? issuer.software_pin : issuer.technical_key, environment: environment === '1' ? '1' : '2',
  });
  if (key && key !== text('cbc:UUID')) r('D06', `Valor del ${isNote ? 'CUDE' : 'CUFE'} no está calculado correctamente`);
  if (issuer.certificate_pem) {
    for (const e of verifyUbl(xml, issuer.certificate_pem)) findings.push({ rule: e.code, message: e.message.replace(/^[A-Z0-9]+: /, '') });
    // The document is generated the day it is signed (Anexo 1.9: the issue date is the signing date).
    const signed = signingDate(root);
    if (signed && signed !== text('cbc:IssueDate')) {
      r('D09e', `La fecha de generación de la ${isNote ? (isCredit ? 'NC' : 'ND') : 'factura'} es diferente a la fecha de firma de la ${isNote ? (isCredit ? 'NC' : 'ND') : 'factura'}`);
    }
  }
  return { errors: errors(), key, number };
}

/** A document the sandbox has accepted, by CUFE/CUDE: a second submission is answered from here. */
interface SandboxDoc {
  _id: string;
  track_id: string;
  number: string;
  received_at: Date;
  /** The ApplicationResponse issued at acceptance: a resubmission gets the same bytes. */
  application_response?: string;
}

const sandboxSchema = new Schema<SandboxDoc>(
  { _id: String, track_id: String, number: String, received_at: Date, application_response: String },
  { versionKey: false },
);

/** Accepted documents of the built-in sandbox. */
export function sandboxDocuments(db: Connection): Model<SandboxDoc> {
  return modelOn<SandboxDoc>(db, 'SandboxDocument', sandboxSchema, 'einvoicing_sandbox');
}

/** The sandbox's issuer register: the workspaces' e-invoicing set-ups in this service's database. */
export function issuerRegister(db: Connection): IssuerLookup {
  return async (softwareId, nit) => {
    const issuer = await settings(db).findOne({ software_id: softwareId, 'issuer.nit': nit }).lean();
    if (!issuer) return null;
    const registered = await certificates(db).findById(issuer._id, { cert_pem: 1 }).lean();
    return { ...openSettings(issuer), certificate_pem: registered?.cert_pem ?? null };
  };
}

/**
 * The built-in authority sandbox: validates and answers like DIAN's test environment. An
 * accepted document is kept by its CUFE, so resubmitting it (a retry after a lost answer) is
 * answered with the first tracking id and never counted twice — as the authority does.
 */
export async function sandboxReceive(db: Connection, xml: string): Promise<AuthorityAnswer> {
  const { errors, key, number } = await validateDocument(xml, issuerRegister(db));
  if (errors.length || !key || !number) {
    return { is_valid: false, status_code: '99', status_description: 'Documento con errores en campos mandatorios.', document_key: key, track_id: null, errors };
  }
  const model = sandboxDocuments(db);
  const root = parseXml(xml);
  const supplier = child(root, 'cac:AccountingSupplierParty/cac:Party/cac:PartyTaxScheme');
  const companyId = child(supplier, 'cbc:CompanyID');
  const checkDigit = companyId?.getAttribute('schemeID');
  const trackId = randomUUID();
  const receivedAt = new Date();
  const applicationResponse = applicationResponseXml({
    number, key, isCredit: documentKind(root) !== 'invoice', trackId, at: receivedAt,
    issuer: { nit: textOf(companyId).trim(), name: textOf(child(supplier, 'cbc:RegistrationName')).trim(), check_digit: checkDigit && /^\d$/.test(checkDigit) ? Number(checkDigit) : null },
  });
  try {
    await model.create({ _id: key, track_id: trackId, number, received_at: receivedAt, application_response: applicationResponse });
  } catch (err) {
    if ((err as { code?: number }).code !== 11000) throw err;
  }
  const stored = (await model.findById(key).lean())!;
  return {
    is_valid: true, status_code: '00',
    status_description: `Procesado Correctamente. Documento ${stored.number} validado por la DIAN (habilitación).`,
    document_key: key, track_id: stored.track_id, errors: [], application_response: stored.application_response ?? null,
  };
}
