import { defineModule } from '@cuadra/shared';
import { attachedDocuments } from '../../einvoicing/attached.ts';
import { certificates } from '../../einvoicing/certificate.ts';
import { sandboxDocuments } from '../../einvoicing/sandbox.ts';
import { signedDocuments } from '../../einvoicing/signed.ts';
import { counters, settings } from '../../lib/settings.ts';
import { einvoicingLane } from './agenda.ts';
import { configure } from './tools/configure.ts';
import { qr } from './tools/qr.ts';
import { uploadCertificate } from './tools/upload_certificate.ts';

/** Electronic invoicing settings, numbering, and the built-in DIAN-like sandbox. */
export const einvoicingModule = defineModule({
  name: 'einvoicing',
  tools: [configure, uploadCertificate, qr],
  models: [settings, counters, sandboxDocuments, certificates, signedDocuments, attachedDocuments],
  // The certificate's expiry and the numbering resolutions' end and exhaustion, warned ahead.
  reads: { agenda: { tax: einvoicingLane } },
});
