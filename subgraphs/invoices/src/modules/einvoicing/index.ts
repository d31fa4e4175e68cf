import { defineModule } from '@cuadra/shared';
import { attachedDocuments } from '../../e-documents/attached.ts';
import { einvoicingLane } from './agenda.ts';
import { certificates } from '../../e-documents/certificate.ts';
import { sandboxDocuments } from '../../e-documents/sandbox.ts';
import { signedDocuments } from '../../e-documents/signed.ts';
import { counters, settings } from '../../lib/settings.ts';
import { configure } from './tools/configure.ts';
import { qr } from './tools/qr.ts';
import { peppolConfigure } from './tools/peppol_configure.ts';
import { peppolExport } from './tools/peppol_export.ts';
import { peppolSettings } from '../../e-documents/peppol/settings.ts';
import { settingsTool } from './tools/settings.ts';
import { uploadCertificate } from './tools/upload_certificate.ts';

/**
 * Electronic invoicing settings, numbering, and the built-in DIAN-like sandbox. Its compliance
 * warnings (certificate, numbering resolutions) are part of the tax module's `tax` agenda lane.
 */
export const einvoicingModule = defineModule({
  name: 'einvoicing',
  tools: [configure, uploadCertificate, qr, settingsTool, peppolConfigure, peppolExport],
  models: [settings, counters, sandboxDocuments, certificates, signedDocuments, attachedDocuments, peppolSettings],
  reads: { agendaParts: { tax: einvoicingLane } },
});
