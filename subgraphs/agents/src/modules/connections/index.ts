import { defineModule } from '@cuadra/shared';
import { connections } from './model.ts';
import { connectionsSource } from './sources.ts';
import { create } from './tools/create.ts';
import { list } from './tools/list.ts';
import { revoke } from './tools/revoke.ts';

/** Credentials to outside services (API keys, OAuth grants), sealed and refreshed. */
export const connectionsModule = defineModule({
  name: 'connections',
  tools: [create, list, revoke],
  models: [connections],
  listed: [{ model: connections }],
  reads: { sources: { connections: connectionsSource } },
});
