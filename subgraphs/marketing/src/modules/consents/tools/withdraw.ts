import { CuadraError, defineTool, ID_SCHEMA, recordOutput } from '@cuadra/shared';
import { CHANNELS, consentId, consents, CONSENT_VIEW_SCHEMA, consentView } from '../model.ts';
import { recordConsent } from '../record.ts';
import { recorder } from './grant.ts';

/** Records that a party withdrew its consent on a channel; campaigns leave it out from then on. */
export const withdraw = defineTool({
  name: 'consents.withdraw',
  description: 'Record that a party withdrew its consent on a channel (asked by phone, in writing…), with the reason. Campaigns not yet sent to it leave it out.',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['party_id', 'channel'],
    properties: { party_id: ID_SCHEMA, channel: { enum: [...CHANNELS] }, reason: { type: 'string', minLength: 1, maxLength: 2000 } },
  },
  output: recordOutput('consent', CONSENT_VIEW_SCHEMA),
  async handler(input, ctx) {
    const known = await consents(ctx.db).exists({ _id: consentId(ctx.workspace, input.party_id, input.channel) });
    if (!known) throw new CuadraError('not_found', `Party ${input.party_id} has no consent on ${input.channel} in this workspace.`);
    const doc = await recordConsent(ctx.db, {
      workspace: ctx.workspace, party_id: input.party_id, channel: input.channel, status: 'withdrawn',
      evidence: { source: 'written', text: input.reason ?? 'Withdrawn at the person\'s request.', reference: null, recorded_by: recorder(ctx.principal), ip: null, user_agent: null, at: ctx.now },
    });
    return { consent: consentView(doc!) };
  },
});
