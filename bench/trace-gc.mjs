// Preloaded (`--import`) by bench/instructions-gc.ts into every service: V8's --trace-gc, which NODE_OPTIONS refuses.
import v8 from 'node:v8';
v8.setFlagsFromString('--trace-gc');
