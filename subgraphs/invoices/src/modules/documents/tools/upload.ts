import { createHash } from 'node:crypto';
import { createPositioned, CuadraError, defineTool, newId } from '@cuadra/shared';
import { BILL_LINE_ACCOUNT_CODES } from '../../../accounting/payable-accounts.ts';
import { DOCUMENT_VIEW_SCHEMA, documents, documentSearchText, documentView, kindOf, MAX_DOCUMENT_BYTES, type DocumentDoc } from '../model.ts';
import { processDocument } from '../process.ts';

/** Base64 characters for {@link MAX_DOCUMENT_BYTES} bytes. */
const MAX_BASE64_CHARS = Math.ceil(MAX_DOCUMENT_BYTES / 3) * 4;

const INPUT = {
  type: 'object', additionalProperties: false, required: ['name', 'content_type', 'content'],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 200, description: 'The file name, e.g. ad0900373115000012345.xml.' },
    content_type: { type: 'string', minLength: 3, maxLength: 100, pattern: '^[A-Za-z0-9!#$&^_.+-]+/[A-Za-z0-9!#$&^_.+-]+$', description: 'The file\'s media type (application/xml, text/xml, application/pdf, image/png …).' },
    content: { type: 'string', minLength: 1, maxLength: MAX_BASE64_CHARS, description: 'The file in base64, at most 512 KiB once decoded.' },
    account: { enum: BILL_LINE_ACCOUNT_CODES as unknown as readonly ['5110', '5120', '5135', '5145', '5195', '1435', '1524', '1528'], description: 'PUC account the bill\'s lines are charged to (default 5195 diversos); change it on the draft bill if lines differ.' },
    process: { type: 'boolean', description: 'Process at once (default true): an e-invoice becomes a draft bill, or the document fails with the reason.' },
  },
} as const;

/** The stored bytes of a base64 text; refused at /content when it is not base64 or too large. */
function decode(content: string): Buffer {
  const bytes = Buffer.from(content, 'base64');
  // Buffer.from skips what is not base64; re-encoding tells a real base64 text from garbage.
  if (bytes.toString('base64').replace(/=+$/, '') !== content.replace(/=+$/, '')) throw new CuadraError('invalid_input', 'The content is not base64.', { field: '/content' });
  if (bytes.length > MAX_DOCUMENT_BYTES) throw new CuadraError('invalid_input', `The file is ${bytes.length} bytes; at most ${MAX_DOCUMENT_BYTES} are accepted.`, { field: '/content' });
  return bytes;
}

/**
 * Stores an uploaded file with its SHA-256 and, unless told not to, processes it. The same content
 * uploaded again in the workspace answers the existing document (`duplicate: true`) and changes nothing.
 */
export const upload = defineTool({
  name: 'documents.upload',
  description: 'Upload a file (base64, with its name and content type, at most 512 KiB), stored with its SHA-256. A supplier\'s DIAN e-invoice (AttachedDocument or UBL 2.1 Invoice XML) is processed into a draft bill unless process is false: supplier found by NIT in crm, lines with VAT, withholdings, the supplier\'s invoice number, the CUFE kept and checked; a file that cannot become a bill fails with the reason. The same file uploaded again answers the existing document.',
  risk: 'write',
  input: INPUT,
  output: {
    type: 'object', additionalProperties: false, required: ['document', 'duplicate'],
    properties: { document: DOCUMENT_VIEW_SCHEMA, duplicate: { type: 'boolean', description: 'True when this content was already uploaded: the existing document is answered.' } },
  },
  maxInputBytes: MAX_BASE64_CHARS + 16 * 1024,
  async handler(input, ctx) {
    const bytes = decode(input.content);
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    const contentKey = `${ctx.workspace}|${sha256}`;
    const model = documents(ctx.db);
    const existing = await model.findOne({ content_key: contentKey, workspace: ctx.workspace }).lean();
    if (existing) return { document: documentView(existing), duplicate: true };
    const doc: DocumentDoc = {
      _id: newId('doc'), workspace: ctx.workspace, name: input.name, content_type: input.content_type.toLowerCase(), kind: kindOf(input.content_type), size: bytes.length,
      sha256, content_key: contentKey, content: bytes, status: 'uploaded', reason: null, line_account: input.account ?? '5195', bill_id: newId('bil'),
      processed_bill: null, invoice: null, processing_at: null, search_lc: documentSearchText(input.name, null), created_at: ctx.now, updated_at: ctx.now,
    };
    try {
      await createPositioned(model, doc);
    } catch (err) {
      if ((err as { code?: number }).code !== 11000) throw err;
      const first = await model.findOne({ content_key: contentKey, workspace: ctx.workspace }).lean();
      if (!first) throw err;
      return { document: documentView(first), duplicate: true };
    }
    const result = input.process === false ? doc : await processDocument(ctx, doc._id);
    return { document: documentView(result), duplicate: false };
  },
});
