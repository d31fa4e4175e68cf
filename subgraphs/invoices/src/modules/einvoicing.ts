import { defineModule } from '@cuadra/shared';
import { sandboxDocuments } from '../einvoicing/sandbox.ts';
import { counters, settings } from '../models/settings.ts';
import { configure } from '../tools/einvoicing/configure.ts';

/** Electronic invoicing settings, numbering, and the built-in DIAN-like sandbox. */
export const einvoicingModule = defineModule({
  name: 'einvoicing',
  tools: [configure],
  models: [settings, counters, sandboxDocuments],
});
