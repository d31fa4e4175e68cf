import { CuadraError, defineTool, ID_INPUT, REPAIR_AFTER_MS } from '@cuadra/shared';
import { keepAttached, signedAttachedDocument } from '../../../e-documents/attached.ts';
import { AUTHORITY_ANSWER_SCHEMA } from '@cuadra/shared/dian';
import { authorityEndpoint, submitToAuthority } from '../../../e-documents/submit.ts';
import { authorityXml } from '../../../e-documents/signed.ts';
import { requireSettings } from '../ops.ts';
import { issuerGaps } from '../../../lib/settings.ts';
import { taxRegimeOf } from '../../../lib/tax-regime.ts';
import { INVOICE_VIEW_SCHEMA, invoices, invoiceView, referencedInvoiceId, type AuthorityState } from '../model.ts';


/**
 * Sends a posted invoice or credit note to the e-invoicing authority (risk `external`: it leaves
 * the workspace). One call submits at most once: the document is first marked `submitting` by a
 * conditional update (never while accepted or while another submission is in flight); the
 * authority dedupes by CUFE, so sending again after a lost answer cannot register it twice.
 */
export const send = defineTool({
  name: 'invoices.send',
  description: 'Submit a posted invoice or credit note to the e-invoicing authority (DIAN, UBL 2.1) at the configured endpoint; returns its verdict (accepted with a tracking id, or rejected with reasons). A rejected document may be sent again; an accepted one is refused.',
  risk: 'external',
  input: ID_INPUT,
  output: {
    type: 'object', additionalProperties: false, required: ['invoice', 'authority', 'xml_bytes'],
    properties: { invoice: INVOICE_VIEW_SCHEMA, authority: AUTHORITY_ANSWER_SCHEMA, xml_bytes: { type: 'integer', minimum: 0 } },
  },
  async handler(input, ctx) {
    if (taxRegimeOf(ctx.principal) !== 'dian') {
      throw new CuadraError('conflict', 'This workspace is outside Colombia: its invoices do not go to DIAN; einvoicing.peppol_export gives their Peppol BIS 3 document.');
    }
    const s = await requireSettings(ctx.db, ctx.workspace);
    // What DIAN requires of the issuer and the set-up does not hold yet: nothing leaves until it does (the authority would refuse it, FAJ07…).
    const gaps = issuerGaps(s);
    if (gaps.length) throw new CuadraError('conflict', `DIAN needs the issuer's ${gaps.join(' and ')} on every document; set it with einvoicing.configure before sending.`);
    const model = invoices(ctx.db);
    const doc = await model.findOne({ _id: input.id, workspace: ctx.workspace }).lean();
    if (!doc) throw new CuadraError('not_found', `No invoice ${input.id} exists in this workspace.`);
    if (doc.status === 'draft') throw new CuadraError('conflict', `Invoice ${doc._id} is a draft; post it before sending it.`);
    if (doc.authority?.status === 'accepted') throw new CuadraError('conflict', `${doc.number} was already accepted by the authority (tracking id ${doc.authority.track_id}).`);
    // Signed before the claim: a certificate that cannot sign refuses the call with nothing marked as submitting.
    const credited = referencedInvoiceId(doc) ? await model.findOne({ _id: referencedInvoiceId(doc)!, workspace: ctx.workspace }).lean() : null;
    const xml = await authorityXml(ctx.db, ctx.workspace, doc, s, credited, ctx.now, { store: true });
    const endpoint = authorityEndpoint();
    const submitting: AuthorityState = { status: 'submitting', track_id: null, errors: [], submitted_at: ctx.now, attempts: (doc.authority?.attempts ?? 0) + 1, endpoint };
    const claimed = await model.findOneAndUpdate(
      {
        _id: doc._id, workspace: ctx.workspace,
        $or: [{ authority: null }, { 'authority.status': 'rejected' }, { 'authority.status': 'submitting', 'authority.submitted_at': { $lt: new Date(ctx.now.getTime() - REPAIR_AFTER_MS) } }],
      },
      { $set: { authority: submitting } },
      { returnDocument: 'after' },
    ).lean();
    if (!claimed) throw new CuadraError('conflict', `${doc.number} is being sent by another call, or was accepted meanwhile.`);
    let answer;
    try {
      answer = await submitToAuthority(ctx.db, xml, endpoint);
    } catch (err) {
      // Nothing is known to be accepted: release the claim so the call can be repeated.
      await model.updateOne({ _id: doc._id, 'authority.status': 'submitting', 'authority.submitted_at': ctx.now }, { $set: { authority: doc.authority ?? null } });
      throw err;
    }
    // The AttachedDocument is kept before the document is marked accepted: a crash between the two
    // leaves it `submitting`, and the next send (the authority dedupes by CUFE) ends the same way.
    if (answer.is_valid && answer.application_response) {
      await keepAttached(ctx.db, {
        _id: doc._id, workspace: ctx.workspace, number: doc.number ?? '', track_id: answer.track_id, built_at: ctx.now,
        application_response: answer.application_response,
        xml: await signedAttachedDocument(ctx.db, ctx.workspace, doc, s, xml, answer.application_response, ctx.now, ctx.log),
      });
    }
    const { application_response: _kept, ...verdict } = answer;
    const final: AuthorityState = {
      ...submitting,
      status: answer.is_valid ? 'accepted' : 'rejected',
      track_id: answer.track_id,
      errors: answer.errors,
    };
    const after = await model.findOneAndUpdate({ _id: doc._id, 'authority.status': 'submitting', 'authority.submitted_at': ctx.now }, { $set: { authority: final } }, { returnDocument: 'after' }).lean();
    return { invoice: invoiceView(after ?? { ...claimed, authority: final }), authority: verdict, xml_bytes: Buffer.byteLength(xml) };
  },
});
