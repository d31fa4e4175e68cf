/**
 * The tax authority's answer to a submitted document (e-invoice, note, e-payroll), shaped like
 * DIAN's `DianResponse` to SendBillSync / SendNominaSync (Anexo Técnico de Factura Electrónica 1.9,
 * §11; Anexo Técnico de Nómina Electrónica, Resolución 000013 de 2021): what the built-in sandboxes
 * answer and what an endpoint other than the sandbox is expected to answer.
 */
export interface AuthorityAnswer {
  is_valid: boolean;
  /** `00` processed and accepted; `99` rejected with errors (DIAN's codes). */
  status_code: '00' | '99';
  status_description: string;
  /** The CUFE/CUDE/CUNE the authority computed for the document. */
  document_key: string | null;
  /** The authority's tracking id (ZipKey/TrackId) of the submission. */
  track_id: string | null;
  errors: string[];
  /**
   * The authority's ApplicationResponse (UBL XML) of an accepted e-invoice, kept for the
   * AttachedDocument; not part of any tool's output.
   */
  application_response?: string | null;
}

/** JSON Schema of {@link AuthorityAnswer} as tools give it (`authority`): without the ApplicationResponse. */
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
