import { CuadraError, defineTool, ID_SCHEMA, type Principal } from '@cuadra/shared';
import { attachedDocuments } from '../../../e-documents/attached.ts';
import { deliveryMailer, deliverySubject, deliveryView, deliveryZip, DELIVERY_VIEW_SCHEMA, type DeliveryState } from '../../../e-documents/delivery.ts';
import { htmlToPdf } from '@cuadra/shared/pdf';
import { buyerFromCrm } from '../../items/document-lines.ts';
import { requireSettings } from '../ops.ts';
import { INVOICE_VIEW_SCHEMA, invoices, invoiceView } from '../model.ts';
import { representationHtml } from './render.ts';

/** A claim left `sending` this long belongs to a process that died; another call may take it over. */
const STALE_DELIVERY_MS = 5 * 60_000;

/** The roles whose people may send a document to an address other than the buyer's of record. */
export const REDIRECT_ROLES: readonly string[] = ['owner', 'admin', 'accountant'];

/**
 * Where a document goes: the buyer's e-mail of record (crm, else the one on the document). Another
 * address only when a person is making the call themselves (their own session, not a key, an app
 * or an agent) with a role of {@link REDIRECT_ROLES}: otherwise anyone holding a key could have the
 * workspace mail anything to anyone (issue 31, finding 9).
 */
function recipient(asked: string | undefined, ofRecord: string | null, principal: Principal, buyer: string): string {
  if (asked === undefined || (ofRecord !== null && asked.toLowerCase() === ofRecord.toLowerCase())) {
    if (!ofRecord) throw new CuadraError('invalid_input', `${buyer} has no e-mail in crm: record the buyer's e-invoicing address on the customer (parties.update), or have an owner, admin or accountant name it.`, { field: '/to' });
    return ofRecord;
  }
  if (principal.actor.type !== 'member' || !REDIRECT_ROLES.includes(principal.role)) {
    throw new CuadraError('policy_denied', `${buyer}'s e-mail of record is ${ofRecord ?? 'not set'}; only an owner, admin or accountant, signed in themselves, may send a document to another address (not an API key, an app or an agent). Record the buyer's address in crm instead.`);
  }
  return asked;
}

/**
 * E-mails an accepted invoice or note to the buyer as DIAN asks: one ZIP with the AttachedDocument
 * (XML) and the graphic representation (PDF), subject "NIT;name;number;type;name". Tracked on the
 * document (`delivery`): claimed `sending` by one conditional update (a second call meanwhile is a
 * `conflict`), then `sent`, `bounced` (the server refused the recipient) or `failed`; a bounced or
 * failed delivery may be tried again, a sent one is not repeated.
 */
export const deliver = defineTool({
  name: 'invoices.deliver',
  description: 'E-mail an invoice, credit or debit note the authority accepted to the buyer: a ZIP with DIAN\'s AttachedDocument (XML) and the PDF, to the customer\'s e-mail in crm. Only an owner, admin or accountant signed in themselves may name another address (to). Counts against the workspace\'s daily e-mail quota (429 rate_limited when spent). The outcome is kept on the document (delivery: sent, bounced, failed); a bounced or failed delivery can be sent again.',
  risk: 'external',
  input: {
    type: 'object', additionalProperties: false, required: ['id'],
    properties: {
      id: ID_SCHEMA,
      to: { type: 'string', format: 'email', maxLength: 254, description: 'Default and normally: the customer\'s e-mail in crm. Another address only from an owner, admin or accountant signed in themselves (not an API key, app or agent).' },
    },
  },
  output: {
    type: 'object', additionalProperties: false, required: ['invoice', 'delivery'],
    properties: { invoice: INVOICE_VIEW_SCHEMA, delivery: DELIVERY_VIEW_SCHEMA },
  },
  async handler(input, ctx) {
    // The document first: another workspace's invoice is absent here (not_found), whatever this workspace has set up.
    const model = invoices(ctx.db);
    const doc = await model.findOne({ _id: input.id, workspace: ctx.workspace }).lean();
    if (!doc) throw new CuadraError('not_found', `No invoice ${input.id} exists in this workspace.`);
    const s = await requireSettings(ctx.db, ctx.workspace);
    const attached = doc.authority?.status === 'accepted' ? await attachedDocuments(ctx.db).findOne({ _id: doc._id, workspace: ctx.workspace }).lean() : null;
    if (!attached || !doc.number) throw new CuadraError('conflict', `${doc.number ?? doc._id} cannot be delivered yet: only a document the authority accepted (invoices.send) has the AttachedDocument the buyer receives.`);
    if (doc.delivery?.status === 'sent') throw new CuadraError('conflict', `${doc.number} was already delivered to ${doc.delivery.to} (message ${doc.delivery.message_id}).`);
    const ofRecord = (await buyerFromCrm(ctx, doc.customer_id, { archived: true })).email ?? doc.customer.email ?? null;
    const to = recipient(input.to, ofRecord, ctx.principal, doc.customer.name);
    const mailer = deliveryMailer();
    // Everything that can fail before the message leaves is done before the claim.
    let pdf: Buffer;
    try {
      pdf = await htmlToPdf(await representationHtml(ctx.db, doc, s));
    } catch (err) {
      throw new CuadraError('unavailable', 'The PDF printer (Chromium) could not print this document right now; nothing was sent.', { cause: err });
    }
    const zip = await deliveryZip(doc.number, attached.xml, pdf);
    const attempts = (doc.delivery?.attempts ?? 0) + 1;
    // Counted against the workspace's daily mail quota before anything is claimed (refused: nothing done).
    const counted = await ctx.governance.mailQuota.take(ctx.workspace, ctx.now);
    const claim: DeliveryState = { status: 'sending', to, at: ctx.now, message_id: `<${doc._id}.${attempts}@${mailer.domain}>`, error: null, attempts };
    const claimed = await model.findOneAndUpdate(
      {
        _id: doc._id, workspace: ctx.workspace,
        $or: [{ delivery: null }, { 'delivery.status': { $in: ['bounced', 'failed'] } }, { 'delivery.status': 'sending', 'delivery.at': { $lt: new Date(ctx.now.getTime() - STALE_DELIVERY_MS) } }],
      },
      { $set: { delivery: claim } },
      { returnDocument: 'after' },
    ).lean();
    if (!claimed) {
      await ctx.governance.mailQuota.giveBack(ctx.workspace, counted.day);
      throw new CuadraError('conflict', `${doc.number} is being delivered by another call, or was delivered meanwhile.`);
    }
    const kindName = { invoice: 'la factura electrónica', credit_note: 'la nota crédito electrónica', debit_note: 'la nota débito electrónica' }[doc.kind];
    const outcome = await mailer.send({
      to, messageId: claim.message_id, subject: deliverySubject(doc, s),
      text: `${s.issuer.name} (NIT ${s.issuer.nit}-${s.issuer.check_digit}) le envía ${kindName} ${doc.number}, validada por la DIAN (${doc.kind === 'invoice' ? 'CUFE' : 'CUDE'} ${doc.cufe}). Adjunto: el contenedor electrónico (AttachedDocument) y su representación gráfica en PDF.`,
      zip: { filename: `z${doc.number}.zip`, content: zip },
    });
    const final: DeliveryState = { ...claim, status: outcome.status, at: ctx.now, error: outcome.status === 'sent' ? null : outcome.error };
    const after = await model.findOneAndUpdate(
      { _id: doc._id, workspace: ctx.workspace, 'delivery.message_id': claim.message_id, 'delivery.status': 'sending' },
      { $set: { delivery: final } },
      { returnDocument: 'after' },
    ).lean();
    const shown = after ?? { ...claimed, delivery: final };
    return { invoice: invoiceView(shown), delivery: deliveryView(shown.delivery) };
  },
});
