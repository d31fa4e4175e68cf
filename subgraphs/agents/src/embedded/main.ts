import { startEmbeddedServer } from './server.ts';

// The embedded model's own process (started by the agents subgraph on first use, see launcher.ts):
// loads the GGUF file, serves it on a free loopback port, prints `{"url": …}` as its first line,
// and exits when its parent goes (its stdin closes), so it never outlives the subgraph.
const modelPath = process.env.CUADRA_EMBEDDED_MODEL_PATH;
if (!modelPath) throw new Error('CUADRA_EMBEDDED_MODEL_PATH is required.');
const threads = Number(process.env.CUADRA_EMBEDDED_THREADS ?? 2);
const server = await startEmbeddedServer({ modelPath, threads: Number.isInteger(threads) && threads > 0 ? threads : 2 }, Number(process.env.CUADRA_EMBEDDED_PORT ?? 0));
process.stdout.write(`${JSON.stringify({ url: server.url })}\n`);
const stop = () => void server.close().finally(() => process.exit(0));
process.stdin.on('end', stop);
process.stdin.on('close', stop);
process.stdin.resume();
process.once('SIGTERM', stop);
