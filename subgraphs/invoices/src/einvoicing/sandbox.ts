import { modelOn } from '@cuadra/shared';
import { randomUUID } from 'node:crypto';
import { Schema, type Connection, type Model } from 'mongoose';
import { openSettings, rangeOf, settings, type SettingsDoc } from '../lib/settings.ts';
import { applicationResponseXml } from './attached.ts';
import { certificates } from './certificate.ts';
import { cufe } from './cufe.ts';
import { softwareSecurityCode } from './ubl.ts';
import { verifyUbl } from './xades.ts';
import { child, childrenNamed, parseXml, textOf, ublRootNs, XmlError, type XmlElement } from './xml.ts';

/** The authority's answer, shaped like DIAN's DianResponse (test environment). */
export interface AuthorityAnswer {
  is_valid: boolean;
  /** `00` processed and accepted; `99` rejected with errors (DIAN's codes). */
  status_code: '00' | '99';
  status_description: string;
  /** The CUFE/CUDE the authority computed for the document. */
  document_key: string | null;
  /** The authority's tracking id (ZipKey/TrackId) of the submission. */
  track_id: string | null;
  errors: string[];
  /**
   * The authority's ApplicationResponse (UBL XML) of an accepted document, kept for the
   * AttachedDocument; not part of invoices.send's output.
   */
  application_response?: string | null;
}

/**
 * JSON Schema of {@link AuthorityAnswer} (invoices.send gives it as `authority`). An endpoint
 * other than the sandbox is expected to answer this shape exactly.
 */
export const AUTHORITY_ANSWER_SCHEMA = {
  type: 'object', additionalProperties: false,
  required: ['is_valid', 'status_code', 'status_description', 'document_key', 'track_id', 'errors'],
  properties: {
    is_valid: { type: 'boolean' },
    status_code: { enum: ['00', '99'] },
    status_description: { type: 'string' },
    document_key: { type: ['string', 'null'] },
    track_id: { type: ['string', 'null'] },
    errors: { type: 'array', items: { type: 'string' } },
  },
} as const;

/**
 * What the sandbox needs to know of a registered issuer (its habilitación): the keys, and the
 * signing certificate it registered (PEM), if any: then every document must carry a valid signature by it.
 */
export type IssuerLookup = (softwareId: string, nit: string) => Promise<(Pick<SettingsDoc, 'technical_key' | 'software_pin' | 'software_id' | 'numbering' | 'environment'> & { certificate_pem?: string | null }) | null>;

function cents(el: XmlElement | undefined): number | null {
  const t = textOf(el).trim();
  if (!el || !/^-?\d+\.\d{2}$/.test(t)) return null;
  const [whole, frac] = t.replace('-', '').split('.');
  const v = Number(whole) * 100 + Number(frac);
  return t.startsWith('-') ? -v : v;
}

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
function documentKind(root: XmlElement): 'invoice' | 'credit_note' | 'debit_note' | null {
  for (const [name, kind] of [['Invoice', 'invoice'], ['CreditNote', 'credit_note'], ['DebitNote', 'debit_note']] as const) {
    if (root.localName === name && root.namespaceURI === ublRootNs(name)) return kind;
  }
  return null;
}

/**
 * Validates a UBL 2.1 invoice or credit note as DIAN's validation does in the parts that
 * matter here: well-formed XML, the required elements, amounts that add up, a number inside the
 * authorised range, the software security code, and the CUFE/CUDE recomputed from the document
 * and the issuer's keys. Pure apart from the issuer lookup.
 */
export async function validateDocument(xml: string, lookup: IssuerLookup): Promise<{ errors: string[]; key: string | null; number: string | null }> {
  let root: XmlElement;
  try {
    root = parseXml(xml);
  } catch (err) {
    if (err instanceof XmlError) return { errors: [`XML mal formado: ${err.message}`], key: null, number: null };
    throw err;
  }
  const errors: string[] = [];
  const kind = documentKind(root);
  if (!kind) return { errors: [`Raíz desconocida <${root.localName}> (${root.namespaceURI ?? 'sin espacio de nombres'}): se espera Invoice, CreditNote o DebitNote de UBL 2.1.`], key: null, number: null };
  const isCredit = kind === 'credit_note';
  const isDebit = kind === 'debit_note';
  const isNote = isCredit || isDebit;
  const total = isDebit ? 'cac:RequestedMonetaryTotal' : 'cac:LegalMonetaryTotal';
  const text = (path: string) => textOf(child(root, path)).trim();
  const required = ['cbc:UBLVersionID', 'cbc:CustomizationID', 'cbc:ProfileExecutionID', 'cbc:ID', 'cbc:UUID', 'cbc:IssueDate', 'cbc:IssueTime',
    ...(isDebit ? [] : [isCredit ? 'cbc:CreditNoteTypeCode' : 'cbc:InvoiceTypeCode']), 'cbc:DocumentCurrencyCode',
    'cac:AccountingSupplierParty/cac:Party/cac:PartyTaxScheme/cbc:CompanyID', 'cac:AccountingCustomerParty/cac:Party/cac:PartyTaxScheme/cbc:CompanyID',
    `${total}/cbc:LineExtensionAmount`, `${total}/cbc:PayableAmount`,
    'ext:UBLExtensions/ext:UBLExtension/ext:ExtensionContent/sts:DianExtensions/sts:SoftwareProvider/sts:SoftwareID'];
  if (isNote) required.push('cac:BillingReference/cac:InvoiceDocumentReference/cbc:UUID', 'cac:DiscrepancyResponse/cbc:ResponseCode');
  for (const path of required) if (!text(path)) errors.push(`${isDebit ? 'DAD' : isCredit ? 'CAD' : 'FAD'}: falta el elemento requerido ${path}.`);
  if (errors.length) return { errors, key: null, number: text('cbc:ID') || null };
  if (text('cbc:UBLVersionID') !== 'UBL 2.1') errors.push('FAB: UBLVersionID debe ser "UBL 2.1".');
  if (kind === 'invoice' && text('cbc:InvoiceTypeCode') !== '01') errors.push('FAD: InvoiceTypeCode debe ser 01 (factura de venta).');
  if (isCredit && text('cbc:CreditNoteTypeCode') !== '91') errors.push('CAD: CreditNoteTypeCode debe ser 91.');
  if (isCredit && !/^[1-5]$/.test(text('cac:DiscrepancyResponse/cbc:ResponseCode'))) errors.push('CBF: el concepto de la nota crédito debe ser 1 a 5.');
  if (isDebit && text('cbc:CustomizationID') !== '30') errors.push('DAB: CustomizationID de una nota débito que referencia una factura debe ser 30.');
  if (isDebit && !/^[1-4]$/.test(text('cac:DiscrepancyResponse/cbc:ResponseCode'))) errors.push('DBF: el concepto de la nota débito debe ser 1 a 4.');
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text('cbc:IssueDate'))) errors.push('FAD09: IssueDate no es una fecha AAAA-MM-DD.');
  if (!/^\d{2}:\d{2}:\d{2}[-+]\d{2}:\d{2}$/.test(text('cbc:IssueTime'))) errors.push('FAD10: IssueTime debe llevar zona horaria (HH:MM:SS-05:00).');
  const environment = text('cbc:ProfileExecutionID');
  if (environment !== '2') errors.push('FAB: este es el ambiente de habilitación (pruebas): ProfileExecutionID debe ser 2.');

  const lineTag = isDebit ? 'cac:DebitNoteLine' : isCredit ? 'cac:CreditNoteLine' : 'cac:InvoiceLine';
  const lines = childrenNamed(root, lineTag);
  if (lines.length === 0) errors.push('FAV: el documento no tiene líneas.');
  if (text('cbc:LineCountNumeric') && Number(text('cbc:LineCountNumeric')) !== lines.length) errors.push('FAD: LineCountNumeric no coincide con el número de líneas.');
  const lineSum = lines.reduce((s, l) => s + (cents(child(l, 'cbc:LineExtensionAmount')) ?? NaN), 0);
  const subtotal = cents(child(root, `${total}/cbc:LineExtensionAmount`));
  const payable = cents(child(root, `${total}/cbc:PayableAmount`));
  const vat = taxOf(root, '01');
  const inc = taxOf(root, '04');
  const ica = taxOf(root, '03');
  if (subtotal === null || payable === null || Number.isNaN(lineSum)) errors.push('FAU: importes con formato inválido (se esperan dos decimales).');
  else {
    if (lineSum !== subtotal) errors.push(`FAU02: la suma de las líneas (${lineSum}) no es LineExtensionAmount (${subtotal}).`);
    if (subtotal + vat + inc + ica !== payable) errors.push('FAU14: PayableAmount no es la base más los impuestos.');
  }

  const softwareId = text('ext:UBLExtensions/ext:UBLExtension/ext:ExtensionContent/sts:DianExtensions/sts:SoftwareProvider/sts:SoftwareID');
  const issuerNit = text('cac:AccountingSupplierParty/cac:Party/cac:PartyTaxScheme/cbc:CompanyID');
  const issuer = await lookup(softwareId, issuerNit);
  const number = text('cbc:ID');
  if (!issuer) {
    errors.push('FAB: el software o el emisor no están habilitados ante la DIAN.');
    return { errors, key: null, number };
  }
  const range = rangeOf(issuer.numbering, kind);
  const seq = number.startsWith(range.prefix) ? Number(number.slice(range.prefix.length)) : NaN;
  if (!Number.isInteger(seq) || seq < range.from || seq > range.to) errors.push(`FAD05: el número ${number} está fuera del rango autorizado ${range.prefix}${range.from}–${range.to}.`);
  const securityCode = text('ext:UBLExtensions/ext:UBLExtension/ext:ExtensionContent/sts:DianExtensions/sts:SoftwareSecurityCode');
  if (securityCode !== softwareSecurityCode(issuer, number)) errors.push('FAB27: SoftwareSecurityCode no corresponde al software y su PIN.');
  const key = subtotal === null || payable === null ? null : cufe({
    number, issueDate: text('cbc:IssueDate'), issueTime: text('cbc:IssueTime'), subtotal, vat, inc, ica, total: payable,
    issuerNit, buyerId: text('cac:AccountingCustomerParty/cac:Party/cac:PartyTaxScheme/cbc:CompanyID'),
    key: isNote ? issuer.software_pin : issuer.technical_key, environment: environment === '1' ? '1' : '2',
  });
  if (key && key !== text('cbc:UUID')) errors.push(`${isDebit ? 'DAD05: el CUDE' : isCredit ? 'CAD05: el CUDE' : 'FAD06: el CUFE'} no corresponde a los datos del documento.`);
  if (issuer.certificate_pem) errors.push(...verifyUbl(xml, issuer.certificate_pem).map((e) => e.message));
  return { errors, key, number };
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
