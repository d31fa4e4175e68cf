import { defineModule } from '@cuadra/shared';
import { consents, suppressions } from './model.ts';
import { grant } from './tools/grant.ts';
import { list } from './tools/list.ts';
import { request } from './tools/request.ts';
import { withdraw } from './tools/withdraw.ts';

/** Marketing consent per party and channel with its evidence (Ley 1581 de 2012), double opt-in, and the suppression list. */
export const consentsModule = defineModule({
  name: 'consents',
  tools: [grant, request, withdraw, list],
  models: [consents, suppressions],
  listed: [{ model: consents, series: 'marketing_consents' }],
});
