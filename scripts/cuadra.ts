// Operator commands against the system `npm start` runs (or MONGO_URL/REDIS_URL when set):
//   npm run cuadra -- workspace create --name <n> --owner-email <e> [--country CO] [--currency COP]
//   npm run cuadra -- key revoke --workspace <ws_…> --id <key_…>
//   npm run cuadra -- mail [--to <address>]      the e-mail the embedded SMTP server delivered (newest last)
// Each prints one JSON line, but mail, which prints the messages.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { connectDatabase, isCuadraError } from '../shared/src/index.ts';
import { Redis } from 'ioredis';
import { IdentityStore } from '../gateway/src/identity/store.ts';
import { repoRoot } from './infra.ts';
import { readMaildir } from './smtp.ts';

function fail(message: string, code = 2): never {
  process.stderr.write(`${message}\n`);
  process.exit(code);
}

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    name: { type: 'string' },
    'owner-email': { type: 'string' },
    country: { type: 'string' },
    currency: { type: 'string' },
    workspace: { type: 'string' },
    id: { type: 'string' },
    to: { type: 'string' },
  },
});
const command = positionals.join(' ');
const usage = 'usage: npm run cuadra -- workspace create --name <n> --owner-email <e> [--country CO] [--currency COP]\n       npm run cuadra -- key revoke --workspace <ws_…> --id <key_…>\n       npm run cuadra -- mail [--to <address>]';
if (command !== 'workspace create' && command !== 'key revoke' && command !== 'mail') fail(usage);

const runFile = path.join(path.resolve(repoRoot, process.env.CUADRA_DATA_DIR ?? '.data'), 'run.json');
const run = existsSync(runFile) ? (JSON.parse(readFileSync(runFile, 'utf8')) as { mongo_url: string; redis_url: string; maildir?: string }) : undefined;
if (command === 'mail') {
  // The local mailbox of the embedded SMTP server (a person reads claim codes and invitations here).
  const maildir = process.env.CUADRA_MAILDIR ?? run?.maildir;
  if (!maildir) fail('Cuadra is not running with its embedded e-mail: start it with `npm start`.');
  const wanted = values.to?.toLowerCase();
  for (const m of readMaildir(maildir)) {
    if (wanted && !(/^Envelope-to: (.*)$/mi.exec(m.raw)?.[1] ?? '').toLowerCase().includes(wanted)) continue;
    process.stdout.write(`──── ${m.file}\n${m.raw}\n`);
  }
  process.exit(0);
}
const mongoUrl = process.env.MONGO_URL ?? run?.mongo_url;
const redisUrl = process.env.REDIS_URL ?? run?.redis_url;
if (!mongoUrl || !redisUrl) fail('Cuadra is not running: start it with `npm start` (or set MONGO_URL and REDIS_URL).');

const db = await connectDatabase(mongoUrl, process.env.MONGO_DB ?? 'cuadra_gateway');
const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
const identity = new IdentityStore(db, redis);
let exitCode = 0;
try {
  await identity.init();
  if (command === 'workspace create') {
    if (!values.name || !values['owner-email']) fail(usage);
    const created = await identity.createWorkspace({ name: values.name, ownerEmail: values['owner-email'], country: values.country, currency: values.currency });
    process.stdout.write(`${JSON.stringify({ workspace_id: created.workspace_id, api_key: created.api_key })}\n`);
  } else {
    if (!values.workspace || !values.id) fail(usage);
    const revoked = await identity.revokeApiKey(values.workspace, values.id);
    process.stdout.write(`${JSON.stringify({ revoked })}\n`);
    if (!revoked) exitCode = 1;
  }
} catch (err) {
  process.stderr.write(`${isCuadraError(err) ? `${err.code}: ${err.message}` : String(err)}\n`);
  exitCode = 1;
} finally {
  redis.disconnect();
  await db.close();
}
process.exit(exitCode);
