import { CuadraError, defineTool, ID_SCHEMA, recordOutput } from '@cuadra/shared';
import { readParty } from '../../../lib/crm.ts';
import { CHANNELS, CONSENT_VIEW_SCHEMA, consentView } from '../model.ts';
import { recordConsent } from '../record.ts';

/** Who recorded a change: the member behind the call, else the credential. */
export function recorder(principal: { person?: string | null; credential_id: string; actor: { type: string; id: string } }): string {
  return principal.person ? `member:${principal.person}` : `${principal.actor.type}:${principal.actor.id}`;
}

/** Records a party's consent on a channel with its evidence (Ley 1581 de 2012). */
export const grant = defineTool({
  name: 'consents.grant',
  description: 'Record that a party authorised marketing messages on a channel (e-mail), with the evidence Ley 1581 de 2012 asks for: how it was given (form, written, verbal, import), the wording agreed to, and a reference (document, recording, form). For an address not yet confirmed, use consents.request (double opt-in) instead.',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['party_id', 'channel', 'evidence'],
    properties: {
      party_id: ID_SCHEMA,
      channel: { enum: [...CHANNELS] },
      purpose: { type: 'string', minLength: 1, maxLength: 300, description: 'What the person authorised (default: commercial and marketing messages).' },
      evidence: {
        type: 'object', additionalProperties: false, required: ['source', 'text'],
        properties: {
          source: { enum: ['form', 'written', 'verbal', 'import'] },
          text: { type: 'string', minLength: 1, maxLength: 2000, description: 'The wording the person agreed to.' },
          reference: { type: 'string', minLength: 1, maxLength: 300 },
        },
      },
    },
  },
  output: recordOutput('consent', CONSENT_VIEW_SCHEMA),
  async handler(input, ctx) {
    const party = await readParty(ctx.graph, input.party_id);
    if (!party) throw new CuadraError('invalid_input', `No party ${input.party_id} exists in this workspace.`, { field: '/party_id' });
    if (!party.email) throw new CuadraError('invalid_input', `Party ${input.party_id} has no e-mail address; add one in crm first.`, { field: '/party_id' });
    const doc = await recordConsent(ctx.db, {
      workspace: ctx.workspace, party_id: party.id, channel: input.channel, status: 'granted', address: party.email.toLowerCase(), purpose: input.purpose,
      evidence: { source: input.evidence.source, text: input.evidence.text, reference: input.evidence.reference ?? null, recorded_by: recorder(ctx.principal), ip: null, user_agent: null, at: ctx.now },
    });
    return { consent: consentView(doc!) };
  },
});
