import { modelOn } from '@cuadra/shared';
import { DIAN_PARTY } from '@cuadra/shared/dian';
import { Schema, type Connection, type Model } from 'mongoose';
import type { FiscalDocument } from '../lib/fiscal-document.ts';
import type { SettingsDoc } from '../lib/settings.ts';
import { localTime } from '../lib/money.ts';
import { signingKey } from './certificate.ts';
import { customerParty, partyTaxScheme, supplierParty, type DianParty } from './ubl.ts';
import { signAttached } from './xades.ts';
import { xmlEscape as x } from './xml.ts';

const CBC = 'urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2';
const CAC = 'urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2';
const EXT = 'urn:oasis:names:specification:ubl:schema:xsd:CommonExtensionComponents-2';

/** DIAN itself, as it names itself in its ApplicationResponse and as the validator of an AttachedDocument. */
export const DIAN = DIAN_PARTY;

/**
 * Text as one or more CDATA sections: a `]]>` inside (which would end the section) is split across
 * two sections, so an XML parser reading the element's text gives back exactly `text`.
 */
export function cdata(text: string): string {
  return `<![CDATA[${text.split(']]>').join(']]]]><![CDATA[>')}]]>`;
}

/** The date (YYYY-MM-DD) and time with offset (HH:MM:SS-05:00) of an instant in Colombia. */
export function bogotaDateTime(at: Date): { date: string; time: string } {
  const local = new Date(at.getTime() - 5 * 3_600_000);
  return { date: local.toISOString().slice(0, 10), time: localTime(at) };
}

/** A party of an ApplicationResponse or AttachedDocument: its PartyTaxScheme as the invoice states it. */
function exchangeParty(tag: 'SenderParty' | 'ReceiverParty', p: DianParty): string {
  return `<cac:${tag}>${partyTaxScheme(p)}</cac:${tag}>`;
}

/** A party DIAN's answer names by NIT alone (DIAN itself, or an issuer as read from a document). */
function nitParty(name: string, nit: string, checkDigit: number | null): DianParty {
  return { person_type: '1', name, legal_name: name, id_type: '31', id: nit, check_digit: checkDigit, responsibilities: ['R-99-PN'], tax_scheme: '01', address: null, email: null, phone: null };
}

/** What the authority's ApplicationResponse says of an accepted document. */
export interface AcceptedDocument {
  number: string;
  key: string;
  isCredit: boolean;
  issuer: { nit: string; name: string; check_digit: number | null };
  trackId: string;
  at: Date;
}

/**
 * The UBL 2.1 ApplicationResponse an authority answers an accepted document with (DIAN's
 * "Documento validado por la DIAN", ResponseCode 02), as the built-in sandbox issues it: from
 * DIAN to the issuer, naming the document by number and CUFE/CUDE.
 */
export function applicationResponseXml(a: AcceptedDocument): string {
  const { date, time } = bogotaDateTime(a.at);
  return [
    '<?xml version="1.0" encoding="UTF-8" standalone="no"?>',
    `<ApplicationResponse xmlns="urn:oasis:names:specification:ubl:schema:xsd:ApplicationResponse-2" xmlns:cac="${CAC}" xmlns:cbc="${CBC}" xmlns:ext="${EXT}">`,
    '<cbc:UBLVersionID>UBL 2.1</cbc:UBLVersionID><cbc:CustomizationID>1</cbc:CustomizationID><cbc:ProfileID>DIAN 2.1</cbc:ProfileID><cbc:ProfileExecutionID>2</cbc:ProfileExecutionID>',
    `<cbc:ID>${x(a.trackId)}</cbc:ID><cbc:UUID schemeName="CUDE-SHA384">${x(a.trackId)}</cbc:UUID>`,
    `<cbc:IssueDate>${date}</cbc:IssueDate><cbc:IssueTime>${time}</cbc:IssueTime>`,
    exchangeParty('SenderParty', nitParty(DIAN.name, DIAN.nit, DIAN.check_digit)),
    exchangeParty('ReceiverParty', nitParty(a.issuer.name, a.issuer.nit, a.issuer.check_digit)),
    '<cac:DocumentResponse><cac:Response><cbc:ResponseCode>02</cbc:ResponseCode><cbc:Description>Documento validado por la DIAN</cbc:Description></cac:Response>',
    `<cac:DocumentReference><cbc:ID>${x(a.number)}</cbc:ID><cbc:UUID schemeName="${a.isCredit ? 'CUDE-SHA384' : 'CUFE-SHA384'}">${x(a.key)}</cbc:UUID></cac:DocumentReference>`,
    '</cac:DocumentResponse></ApplicationResponse>',
  ].join('');
}

/**
 * DIAN's AttachedDocument (Anexo Técnico 1.9, "contenedor electrónico"): what the buyer receives. It
 * carries the document exactly as it was sent to the authority (signed, in CDATA) and the
 * authority's ApplicationResponse (in CDATA), the parties (sender: the issuer; receiver: the
 * buyer, each as the document names them), and the document's number and CUFE/CUDE (UUID). The
 * container is signed too (signedAttachedDocument); this is its unsigned form, with the
 * ext:UBLExtensions that will hold the signature.
 */
export function attachedDocumentXml(doc: FiscalDocument, s: SettingsDoc, sentXml: string, applicationResponse: string, validatedAt: Date): string {
  if (!doc.number || !doc.cufe) throw new Error('Only a posted document has an AttachedDocument.');
  const keyScheme = doc.kind === 'invoice' ? 'CUFE-SHA384' : 'CUDE-SHA384';
  const profile = { invoice: 'Factura Electrónica de Venta', credit_note: 'DIAN 2.1: Nota Crédito de Factura Electrónica de Venta', debit_note: 'DIAN 2.1: Nota Débito de Factura Electrónica de Venta' }[doc.kind];
  const { date, time } = bogotaDateTime(validatedAt);
  return [
    '<?xml version="1.0" encoding="UTF-8" standalone="no"?>',
    `<AttachedDocument xmlns="urn:oasis:names:specification:ubl:schema:xsd:AttachedDocument-2" xmlns:cac="${CAC}" xmlns:cbc="${CBC}" xmlns:ext="${EXT}">`,
    '<ext:UBLExtensions><ext:UBLExtension><ext:ExtensionContent></ext:ExtensionContent></ext:UBLExtension></ext:UBLExtensions>',
    '<cbc:UBLVersionID>UBL 2.1</cbc:UBLVersionID>',
    '<cbc:CustomizationID>Documentos adjuntos</cbc:CustomizationID>',
    `<cbc:ProfileID>${profile}</cbc:ProfileID>`,
    `<cbc:ProfileExecutionID>${s.environment}</cbc:ProfileExecutionID>`,
    `<cbc:ID>${x(doc.number)}</cbc:ID>`,
    `<cbc:UUID schemeName="${keyScheme}">${x(doc.cufe)}</cbc:UUID>`,
    `<cbc:IssueDate>${date}</cbc:IssueDate><cbc:IssueTime>${time}</cbc:IssueTime>`,
    '<cbc:DocumentType>Contenedor de Factura Electrónica</cbc:DocumentType>',
    `<cbc:ParentDocumentID>${x(doc.number)}</cbc:ParentDocumentID>`,
    exchangeParty('SenderParty', supplierParty(s, null)),
    exchangeParty('ReceiverParty', customerParty(doc.customer)),
    `<cac:Attachment><cac:ExternalReference><cbc:MimeCode>text/xml</cbc:MimeCode><cbc:EncodingCode>UTF-8</cbc:EncodingCode><cbc:Description>${cdata(sentXml)}</cbc:Description></cac:ExternalReference></cac:Attachment>`,
    '<cac:ParentDocumentLineReference><cbc:LineID>1</cbc:LineID><cac:DocumentReference>',
    `<cbc:ID>${x(doc.number)}</cbc:ID><cbc:UUID schemeName="${keyScheme}">${x(doc.cufe)}</cbc:UUID><cbc:IssueDate>${date}</cbc:IssueDate>`,
    '<cbc:DocumentType>ApplicationResponse</cbc:DocumentType>',
    `<cac:Attachment><cac:ExternalReference><cbc:MimeCode>text/xml</cbc:MimeCode><cbc:EncodingCode>UTF-8</cbc:EncodingCode><cbc:Description>${cdata(applicationResponse)}</cbc:Description></cac:ExternalReference></cac:Attachment>`,
    `<cac:ResultOfVerification><cbc:ValidatorID>${x(DIAN.name)}</cbc:ValidatorID><cbc:ValidationResultCode>02</cbc:ValidationResultCode><cbc:ValidationDate>${date}</cbc:ValidationDate><cbc:ValidationTime>${time}</cbc:ValidationTime></cac:ResultOfVerification>`,
    '</cac:DocumentReference></cac:ParentDocumentLineReference>',
    '</AttachedDocument>',
  ].join('');
}

/**
 * The AttachedDocument as the buyer receives it: signed by the issuer (XAdES-EPES with DIAN's
 * policy, in its ext:UBLExtension, as DIAN's own containers are) when the workspace has a
 * certificate that can sign now, unsigned otherwise — as its invoices are. It is built after the
 * authority accepted the document, so a certificate that lapsed since the document was signed
 * does not undo that acceptance: the container is kept unsigned (and the reason logged).
 */
export async function signedAttachedDocument(db: Connection, workspace: string, doc: FiscalDocument, s: SettingsDoc, sentXml: string, applicationResponse: string, validatedAt: Date, log?: { warn(o: object, msg: string): void }): Promise<string> {
  const xml = attachedDocumentXml(doc, s, sentXml, applicationResponse, validatedAt);
  try {
    const key = await signingKey(db, workspace, validatedAt);
    return key ? signAttached(xml, key, validatedAt) : xml;
  } catch (err) {
    log?.warn({ err, invoice: doc._id }, 'AttachedDocument kept unsigned: the certificate cannot sign now');
    return xml;
  }
}

/**
 * An accepted document's AttachedDocument, built once when the authority accepted it and kept
 * (`_id` = invoice id): the document as sent and the authority's answer never change afterwards.
 */
export interface AttachedDoc {
  _id: string;
  workspace: string;
  number: string;
  xml: string;
  /** The authority's ApplicationResponse as received. */
  application_response: string;
  track_id: string | null;
  built_at: Date;
}

const attachedSchema = new Schema<AttachedDoc>(
  { _id: String, workspace: { type: String, required: true }, number: String, xml: { type: String, required: true }, application_response: String, track_id: String, built_at: Date },
  { versionKey: false },
);

/** AttachedDocuments of accepted invoices and notes (`_id` = invoice id). */
export function attachedDocuments(db: Connection): Model<AttachedDoc> {
  return modelOn<AttachedDoc>(db, 'EinvoicingAttached', attachedSchema, 'einvoicing_attached');
}

/** Keeps the AttachedDocument of a document just accepted; a second call (a retry) keeps the first. */
export async function keepAttached(db: Connection, doc: AttachedDoc): Promise<void> {
  try {
    await attachedDocuments(db).create(doc);
  } catch (err) {
    if ((err as { code?: number }).code !== 11000) throw err;
  }
}
