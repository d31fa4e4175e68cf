import { CuadraError, defineTool, ID_SCHEMA, recordOutput } from '@cuadra/shared';
import { readParty } from '../../../lib/crm.ts';
import { signLink } from '../../../lib/links.ts';
import { publicUrl } from '../../../lib/public-url.ts';
import { emailAccounts } from '../../email_accounts/model.ts';
import { smtpTransport } from '../../email_accounts/servers.ts';
import { CONSENT_VIEW_SCHEMA, consentView } from '../model.ts';
import { recordConsent } from '../record.ts';
import { recorder } from './grant.ts';

/** The purpose of a double opt-in link (links.ts). */
export const CONFIRM_PURPOSE = 'consent-confirm';

/**
 * Double opt-in: e-mails the party a link to confirm its consent; the consent stays pending (and the
 * party out of every audience) until the person follows it and confirms (the public page at
 * `/c/<token>`, which records their confirmation with its time, address and browser as evidence).
 */
export const request = defineTool({
  name: 'consents.request',
  description: 'Double opt-in: e-mail a party (from a verified account) a link to confirm it wants marketing e-mail. Its consent is pending — and it stays out of every campaign — until the person confirms on the page the link opens; the confirmation is kept as evidence (time, address, browser).',
  risk: 'external',
  input: {
    type: 'object', additionalProperties: false, required: ['party_id', 'account_id'],
    properties: { party_id: ID_SCHEMA, account_id: ID_SCHEMA, purpose: { type: 'string', minLength: 1, maxLength: 300 } },
  },
  output: recordOutput('consent', CONSENT_VIEW_SCHEMA),
  async handler(input, ctx) {
    const account = await emailAccounts(ctx.db).findOne({ _id: input.account_id, workspace: ctx.workspace, removed_at: null }).lean();
    if (!account) throw new CuadraError('invalid_input', `No e-mail account ${input.account_id} exists in this workspace.`, { field: '/account_id' });
    if (account.status !== 'verified') throw new CuadraError('invalid_input', `Account ${input.account_id} is not verified; run email_accounts.verify first.`, { field: '/account_id' });
    const party = await readParty(ctx.graph, input.party_id);
    if (!party) throw new CuadraError('invalid_input', `No party ${input.party_id} exists in this workspace.`, { field: '/party_id' });
    if (!party.email) throw new CuadraError('invalid_input', `Party ${input.party_id} has no e-mail address.`, { field: '/party_id' });
    const address = party.email.toLowerCase();
    const doc = await recordConsent(ctx.db, {
      workspace: ctx.workspace, party_id: party.id, channel: 'email', status: 'pending', address, purpose: input.purpose, from: ['pending', 'withdrawn'],
      evidence: { source: 'request', text: `Confirmation requested by e-mail to ${address}.`, reference: null, recorded_by: recorder(ctx.principal), ip: null, user_agent: null, at: ctx.now },
    });
    if (!doc) throw new CuadraError('conflict', `Party ${input.party_id} has already granted its consent on e-mail.`);
    const link = `${publicUrl()}/c/${signLink(CONFIRM_PURPOSE, { w: ctx.workspace, p: party.id, a: address })}`;
    const transport = smtpTransport(account);
    try {
      await transport.sendMail({
        from: { name: account.from_name, address: account.from_email }, to: address,
        subject: `${account.from_name}: confirma que quieres recibir nuestros correos`,
        text: `Hola ${party.name}:\n\n${account.from_name} quiere enviarte correos comerciales${input.purpose ? ` (${input.purpose})` : ''}. Si estás de acuerdo, confírmalo aquí:\n\n${link}\n\nSi no lo pediste, ignora este mensaje: no recibirás nada.\n`,
      });
    } finally {
      transport.close();
    }
    return { consent: consentView(doc) };
  },
});
