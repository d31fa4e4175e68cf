// `npm start` (scripts/start-system.ts: the whole system on its embedded default), with Node's
// on-disk compile cache on for this process's own modules, as every service already has it
// (scripts/system.ts `compileCacheDir`): the modules it loads are compiled once, not at every start.
// Set first, so the modules imported after it are the ones cached.
import module from 'node:module';
import { fileURLToPath } from 'node:url';

module.enableCompileCache(fileURLToPath(new URL('../.cache/node-compile', import.meta.url)));
await import('./start-system.ts');
