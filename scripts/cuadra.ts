// Operator commands against the system `npm start` runs: `npm run cuadra -- --help` prints them (the usage below).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { connectDatabase, IDEMPOTENCY_RETENTION_MS, isCuadraError } from '../shared/src/index.ts';
import { Redis } from 'ioredis';
import { IdentityStore } from '../gateway/src/identity/store.ts';
import { repoRoot } from './infra.ts';
import { readMaildir } from './smtp.ts';
import { localDate } from '../shared/src/periods.ts';

function fail(message: string, code = 2): never {
  process.stderr.write(`${message}\n`);
  process.exit(code);
}

const usage = `Cuadra's operator commands, against the system \`npm start\` runs (or MONGO_URL and REDIS_URL when set).

usage: npm run cuadra -- <command> [options]

commands:
  workspace create --name <n> --owner-email <e> [--country CO] [--currency COP]
      open a workspace; prints its id and the owner's API key (shown once)
  key revoke --workspace <ws_…> --id <key_…>
      revoke an API key at once
  mail [--to <address>]
      the e-mail the embedded SMTP server delivered (newest last)
  demo [--seed 2026] [--size full|small] [--owner-email <e>]
      a demo company with a year of business (scripts/demo.ts)
  help, --help, -h
      this text

Each prints one JSON line, but mail, which prints the messages, and demo, which prints its progress.
Exit status: 0 done, 1 refused or failed, 2 a command or option not understood (this text on stderr).
`;

let parsed: ReturnType<typeof parseOptions>;
function parseOptions() {
  return parseArgs({
    allowPositionals: true,
    options: {
      help: { type: 'boolean', short: 'h' },
      name: { type: 'string' },
      'owner-email': { type: 'string' },
      country: { type: 'string' },
      currency: { type: 'string' },
      workspace: { type: 'string' },
      id: { type: 'string' },
      to: { type: 'string' },
      seed: { type: 'string' },
      size: { type: 'string' },
    },
  });
}
try {
  parsed = parseOptions();
} catch (err) {
  // An unknown option or a missing value: say which, then how to ask.
  fail(`${(err as Error).message}\n\n${usage}`);
}
const { positionals, values } = parsed;
const command = positionals.join(' ');
if (values.help || command === 'help') {
  process.stdout.write(usage);
  process.exit(0);
}
if (command !== 'workspace create' && command !== 'key revoke' && command !== 'mail' && command !== 'demo') fail(command ? `unknown command: ${command}\n\n${usage}` : usage);

const runFile = path.join(path.resolve(repoRoot, process.env.CUADRA_DATA_DIR ?? '.data'), 'run.json');
const run = existsSync(runFile) ? (JSON.parse(readFileSync(runFile, 'utf8')) as { gateway_url?: string; mongo_url: string; redis_url: string; maildir?: string }) : undefined;
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
  if (command === 'demo') {
    exitCode = await demo();
  } else if (command === 'workspace create') {
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

/**
 * The demo company: opens a workspace (as `workspace create` does, an owner key) and runs
 * scripts/demo.ts's runDemo against the running gateway. The workspace, its key and the anchor day
 * are kept in .data/demo-<seed>.json, so running it again (after a crash, or on purpose) finishes
 * the same company instead of opening another: every call replays under its Idempotency-Key.
 */
async function demo(): Promise<number> {
  const { runDemo } = await import('./demo.ts');
  const seed = Number(values.seed ?? 2026);
  if (!Number.isSafeInteger(seed) || seed < 0) fail('--seed must be a whole number.');
  const size = values.size ?? 'full';
  if (size !== 'full' && size !== 'small') fail('--size must be full or small.');
  const gatewayUrl = process.env.CUADRA_URL ?? run?.gateway_url;
  if (!gatewayUrl) fail('Cuadra is not running: start it with `npm start` (or set CUADRA_URL).');
  const dataDir = path.dirname(runFile);
  mkdirSync(dataDir, { recursive: true });
  const stateFile = path.join(dataDir, `demo-${seed}${size === 'small' ? '-small' : ''}.json`);
  type State = { workspace_id: string; api_key: string; today: string; owner_email: string; opened_at?: string };
  let state: State | undefined = existsSync(stateFile) ? JSON.parse(readFileSync(stateFile, 'utf8')) : undefined;
  // Replays last as long as the idempotency records (IDEMPOTENCY_RETENTION_MS, 48 h); after that a re-run
  // could not tell done calls from new ones, so it stops rather than risk making anything twice.
  if (state?.opened_at && Date.now() - Date.parse(state.opened_at) > IDEMPOTENCY_RETENTION_MS - 3600_000) {
    process.stderr.write(`The demo workspace ${state.workspace_id} (seed ${seed}) was opened at ${state.opened_at}; its calls can no longer be replayed safely (idempotency records last 48 h). Use it as it is, or make another with --seed <n>.\n`);
    return 1;
  }
  if (state) {
    process.stdout.write(`Demo workspace ${state.workspace_id} (seed ${seed}) already opened on ${state.today}: finishing it; nothing is made twice.\n`);
  } else {
    const ownerEmail = values['owner-email'] ?? 'demo@cuadra.example';
    const created = await identity.createWorkspace({ name: 'Cuadra Demo SAS', ownerEmail, keyName: 'Demo owner key' });
    state = { workspace_id: created.workspace_id, api_key: created.api_key, today: localDate(new Date()), owner_email: ownerEmail, opened_at: new Date().toISOString() };
    writeFileSync(stateFile, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
    process.stdout.write(`Opened the demo workspace ${state.workspace_id} (its owner key is kept in ${path.relative(process.cwd(), stateFile)}).\n`);
  }
  const started = Date.now();
  const result = await runDemo({
    gatewayUrl, apiKey: state.api_key, seed, size, today: state.today, ownerEmail: state.owner_email,
    log: (line) => process.stdout.write(`  ${line}\n`),
  });
  const secs = Math.round((Date.now() - started) / 1000);
  process.stdout.write(`\nDone in ${secs} s: ${result.calls} calls (${result.replays} replayed). ${JSON.stringify(result.counts)}\n`);
  for (const s of result.skipped) process.stdout.write(`  skipped: ${s}\n`);
  process.stdout.write('\nSign in as the owner:\n');
  if (result.invite_url) {
    process.stdout.write(`  1. open ${result.invite_url}\n     and set a password for ${state.owner_email} (the link works once, for 7 days)\n  2. sign in at ${gatewayUrl}/app/sign-in\n`);
  } else {
    process.stdout.write(`  ${state.owner_email} was invited on the first run (the link is shown once); sign in at ${gatewayUrl}/app/sign-in\n`);
  }
  if (result.dashboard_url) process.stdout.write(`Dashboard: ${result.dashboard_url}\n`);
  process.stdout.write(`API key (owner): ${state.api_key}\n  curl -s ${gatewayUrl}/v1/tools/metrics.query:invoke -H "Authorization: Bearer ${state.api_key}" -H 'content-type: application/json' -d '{"metric":"revenue","days":365}'\n`);
  return 0;
}
