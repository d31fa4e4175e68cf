import { defineTool } from '@cuadra/shared';
import { CERTIFICATE_VIEW_SCHEMA, certificates, certificateView } from '../../../e-documents/certificate.ts';
import { secretsSet, settings } from '../../../lib/settings.ts';
import { SETTINGS_VIEW_SCHEMA } from './configure.ts';

/**
 * The workspace's e-invoicing set-up as a person may see it: the non-secret settings, whether the
 * secrets (technical key, software PIN) are set — never their values — and the signing
 * certificate's public part. `settings` and `certificate` are null until configured/uploaded.
 */
export const settingsTool = defineTool({
  name: 'einvoicing.settings',
  description: 'Read the workspace\'s DIAN e-invoicing set-up: issuer, environment, software id, currency and numbering ranges; whether the technical key and software PIN are set (never their values); the signing certificate\'s subject, issuer, serial and expiry. null until configured.',
  risk: 'read',
  input: { type: 'object', additionalProperties: false, properties: {} },
  output: {
    type: 'object', additionalProperties: false, required: ['settings', 'secrets', 'certificate'],
    properties: {
      settings: { anyOf: [{ type: 'null' }, SETTINGS_VIEW_SCHEMA] },
      secrets: {
        type: 'object', additionalProperties: false, required: ['technical_key', 'software_pin'],
        properties: { technical_key: { type: 'boolean' }, software_pin: { type: 'boolean' } },
      },
      certificate: { anyOf: [{ type: 'null' }, CERTIFICATE_VIEW_SCHEMA] },
    },
  },
  async handler(_input, ctx) {
    const [doc, cert] = await Promise.all([
      settings(ctx.db).findById(ctx.workspace).lean(),
      certificates(ctx.db).findById(ctx.workspace, { subject: 1, issuer: 1, serial: 1, not_after: 1 }).lean(),
    ]);
    const secrets = secretsSet(doc);
    if (!doc) return { settings: null, secrets, certificate: cert ? certificateView(cert) : null };
    const { technical_key: _k, software_pin: _p, technical_key_sealed: _ks, software_pin_sealed: _ps, ...visible } = doc;
    return { settings: { ...visible, updated_at: doc.updated_at.toISOString() }, secrets, certificate: cert ? certificateView(cert) : null };
  },
});
