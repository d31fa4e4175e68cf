import { runSubgraph } from '@cuadra/shared';
import { createServer, name } from './server.ts';

// The only file with side effects: read the environment, connect, listen.
await runSubgraph(name, 4107, createServer);
