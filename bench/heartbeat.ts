// What the database monitor's faster heartbeat costs (issue 31 finding 7: shared/src/db.ts checks the
// server every HEARTBEAT_FREQUENCY_MS, 1 s, where the driver's default is 10 s, so a dead server is known
// down and a returning one is used again within a second). Starts the MongoDB-protocol server (memory
// backend), opens BENCH_CLIENTS connections (default 30: about what a test worker's shared system and a
// module file hold) with the driver's default heartbeat, idles BENCH_SECONDS (default 20), then the same
// with connectDatabase's settings, side by side, and prints the CPU time the server process (from
// /proc/<pid>/stat) and this process spent in each, per second of idling.
// `node bench/heartbeat.ts`.
import { readFileSync } from 'node:fs';
import mongoose from 'mongoose';
import { startMongo } from '../scripts/infra.ts';
import { HEARTBEAT_FREQUENCY_MS } from '../shared/src/db.ts';

const clients = Number(process.env.BENCH_CLIENTS ?? 30);
const seconds = Number(process.env.BENCH_SECONDS ?? 20);
const mongo = await startMongo({ backend: 'memory' });
const ticks = 100; // USER_HZ on Linux
/** CPU ms of a process so far (user + system). */
const cpuOf = (pid: number) => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / ticks;
};
const ownCpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };

async function idle(label: string, heartbeatFrequencyMS: number | undefined) {
  const conns = await Promise.all(Array.from({ length: clients }, (_, i) => mongoose.createConnection(mongo.url, {
    dbName: `hb_${i}`, serverSelectionTimeoutMS: 5_000, ...(heartbeatFrequencyMS ? { heartbeatFrequencyMS } : {}),
  }).asPromise()));
  const server0 = cpuOf(mongo.pid);
  const own0 = ownCpu();
  await new Promise((r) => setTimeout(r, seconds * 1000));
  const server = (cpuOf(mongo.pid) - server0) / seconds;
  const own = (ownCpu() - own0) / seconds;
  await Promise.all(conns.map((c) => c.close()));
  console.log(`${label.padEnd(28)} server ${server.toFixed(1).padStart(6)} ms CPU/s   clients ${own.toFixed(1).padStart(6)} ms CPU/s`);
  return server + own;
}

try {
  const base = await idle('driver default (10 s)', undefined);
  const ours = await idle(`connectDatabase (${HEARTBEAT_FREQUENCY_MS / 1000} s)`, HEARTBEAT_FREQUENCY_MS);
  console.log(`${clients} idle connections: +${(ours - base).toFixed(1)} ms CPU per second (${((ours - base) / 10).toFixed(2)} % of one core)`);
} finally {
  await mongo.stop();
}
