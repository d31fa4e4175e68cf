import { defineModule } from '@cuadra/shared';
import { sandboxDocuments } from '../../einvoicing/sandbox.ts';
import { counters, settings } from '../../lib/settings.ts';
import { configure } from './tools/configure.ts';

/** Electronic invoicing settings, numbering, and the built-in DIAN-like sandbox. */
export const einvoicingModule = defineModule({
  name: 'einvoicing',
  tools: [configure],
  models: [settings, counters, sandboxDocuments],
});
