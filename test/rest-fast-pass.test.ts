import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OWN_SYSTEM_SETTINGS, startTestSystem, type TestSystem } from './helpers/system.ts';

// The REST fast pass (issue 33, the hop): a call that needs no await before its owner — a key this
// gateway keeps, counted from the block it holds, the body arrived, a fair-share slot free — goes
// from the request's head to the dispatch in one synchronous pass (InvokePipeline.invokeNow). It must
// answer exactly what the general path answers. Two gateways on one system, the second with the pass
// off (CUADRA_REST_FAST_PASS=0), each given the same calls in the same order by a workspace of its own;
// every answer is compared: status, the headers that matter, the body — with only what differs by
// nature between two workspaces (ids, timestamps, a receipt's hash, a window's seconds left) masked.
// The quota is tight enough to reach 429 and loose enough for blocks of counts (a block is up to 16
// calls and at most 1/16 of what is left: most calls served from one, on the fast pass); one call of a
// workspace at once, none waiting (the fair share's 429 from a burst).
let sys: TestSystem;
let general: { url: string };

beforeAll(async () => {
  sys = await startTestSystem('fast-pass', OWN_SYSTEM_SETTINGS, { gatewayEnv: { RATE_LIMIT_PER_CREDENTIAL: '256/60', RATE_LIMIT_PER_WORKSPACE: '100000/60', FAIR_SHARE_SLOTS: '1', FAIR_SHARE_QUEUE: '0' } });
  general = await sys.startAnotherGateway({ CUADRA_REST_FAST_PASS: '0' });
});
afterAll(async () => {
  await sys?.stop();
});

/** The headers an answer's meaning depends on (no request id exists on this surface; content-length follows the masked body). */
const HEADERS = ['content-type', 'ratelimit', 'ratelimit-policy', 'retry-after', 'cuadra-version', 'idempotent-replayed', 'ledger-receipt', 'www-authenticate', 'deprecation', 'sunset', 'allow'];

/** What differs by nature between two workspaces' identical calls: ids, instants, a receipt's seq/hash/signature, a window's seconds left. */
function mask(text: string): string {
  return text
    // An id is a prefix and random characters (a digit or a capital among them); a code (rate_limited) is not.
    .replace(/\b[a-z]{2,5}_(?=[a-z_-]*[A-Z0-9])[A-Za-z0-9_-]{6,}/g, '<id>')
    .replace(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z/g, '<instant>')
    .replace(/wait \d+ s\b/g, 'wait <n> s');
}

interface Answer { status: number; headers: Record<string, string>; body: string }

/**
 * POST one invoke as a client would, the head and a small body in one write (node's client sends them
 * together when the body is given to `end`), so the body has arrived with the head and the fast pass
 * can take the call (fetch may send them apart: such a call goes on the general path, rightly).
 */
function call(base: string, tool: string, body: string | undefined, key: string | undefined, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}/v1/tools/${tool}:invoke`, {
      method: 'POST',
      headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) }), ...headers },
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const seen: Record<string, string> = {};
        for (const name of HEADERS) {
          const raw = res.headers[name];
          let value = Array.isArray(raw) ? raw.join(', ') : raw;
          if (value === undefined) continue;
          if (name === 'ratelimit') value = value.replace(/;t=\d+/g, ';t=<s>');
          if (name === 'retry-after') value = Number(value) >= 1 ? '<s>' : value;
          if (name === 'ledger-receipt') value = /^\d+;[0-9a-f]{64};[A-Za-z0-9_-]+$/.test(value) ? '<receipt>' : value;
          seen[name] = mask(value);
        }
        resolve({ status: res.statusCode!, headers: seen, body: mask(Buffer.concat(chunks).toString('utf8')) });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** A workspace for one gateway: its owner key, a key narrowed to invoices, a key to revoke, a key to spend. */
async function setUp(name: string) {
  const ws = await sys.workspace(name);
  const narrow = await sys.key(ws.workspace_id, 'admin', ['invoices.%']);
  const doomed = await sys.key(ws.workspace_id, 'admin');
  const spent = await sys.key(ws.workspace_id, 'admin');
  return { owner: ws.api_key, narrow: narrow.api_key, doomed, spent: spent.api_key, workspace: ws.workspace_id };
}

describe('the REST fast pass', () => {
  it('answers every call as the general path does: success, refusals of every kind, a hold, a replay, the limits, the owner down', async () => {
    const sides = { fast: { url: sys.gatewayUrl, ...(await setUp('Paso Rapido SAS')) }, general: { url: general.url, ...(await setUp('Paso Rapido SAS')) } };
    const answers: Record<'fast' | 'general', Record<string, Answer>> = { fast: {}, general: {} };
    /** One step for both gateways, the fast one first. */
    const step = async (label: string, run: (side: typeof sides.fast) => Promise<Answer>) => {
      for (const name of ['fast', 'general'] as const) answers[name][label] = await run(sides[name]);
    };
    const list = JSON.stringify({ limit: 2 });
    await step('200, the key not yet kept (general path on both)', (s) => call(s.url, 'parties.list', list, s.owner));
    for (let i = 1; i <= 3; i++) await step(`200 #${i}`, (s) => call(s.url, 'parties.list', list, s.owner));
    await step('200, no body', (s) => call(s.url, 'parties.list', undefined, s.owner));
    await step('200, a version asked for', (s) => call(s.url, 'parties.list', list, s.owner, { 'Cuadra-Version': '2026-11-01' }));
    await step('422, the schema with its field', (s) => call(s.url, 'parties.list', JSON.stringify({ limit: 'x' }), s.owner));
    await step('422, not JSON', (s) => call(s.url, 'parties.list', '{"limit":', s.owner));
    await step('422, not application/json', (s) => call(s.url, 'parties.list', list, s.owner, { 'content-type': 'text/plain' }));
    await step('422, an Idempotency-Key of the wrong form', (s) => call(s.url, 'parties.list', list, s.owner, { 'Idempotency-Key': 'ñ' }));
    await step('422, X-Dry-Run neither true nor false', (s) => call(s.url, 'parties.list', list, s.owner, { 'X-Dry-Run': 'yes' }));
    await step('400, a dry run the tool does not take', (s) => call(s.url, 'pipelines.create', JSON.stringify({ name: 'Ventas', key: 'ventas', stages: [{ name: 'Nuevo', kind: 'open' }, { name: 'Ganado', kind: 'won' }] }), s.owner, { 'X-Dry-Run': 'true' }));
    await step('200, a dry run of a read', (s) => call(s.url, 'parties.list', list, s.owner, { 'X-Dry-Run': 'true' }));
    await step('422, an unknown version', (s) => call(s.url, 'parties.list', list, s.owner, { 'Cuadra-Version': '1999-01-01' }));
    await step('401, no credential', (s) => call(s.url, 'parties.list', list, undefined));
    await step('401, an unknown key', (s) => call(s.url, 'parties.list', list, `nk_${'x'.repeat(40)}`));
    for (let i = 1; i <= 3; i++) await step(`403, a key narrowed to invoices #${i}`, (s) => call(s.url, 'parties.list', list, s.narrow));
    await step('403, another workspace named', (s) => call(s.url, 'parties.list', list, s.owner, { 'X-Tenant-Id': 'ws_someoneelse' }));
    await step('404, no such tool', (s) => call(s.url, 'parties.nothing', list, s.owner));
    await step('413, over the tool\'s bound', (s) => call(s.url, 'parties.list', JSON.stringify({ pad: 'x'.repeat(300 * 1024) }), s.owner));
    await step('200, created under a key', (s) => call(s.url, 'parties.create', JSON.stringify({ name: 'Uno', kind: 'customer' }), s.owner, { 'Idempotency-Key': 'fast-1' }));
    await step('200, replayed', (s) => call(s.url, 'parties.create', JSON.stringify({ name: 'Uno', kind: 'customer' }), s.owner, { 'Idempotency-Key': 'fast-1' }));
    await step('409, the key with another input', (s) => call(s.url, 'parties.create', JSON.stringify({ name: 'Dos', kind: 'customer' }), s.owner, { 'Idempotency-Key': 'fast-1' }));
    await step('404, the owner finds no such party', (s) => call(s.url, 'parties.get', JSON.stringify({ id: 'pty_doesnotexist' }), s.owner));
    await step('200, a policy holding parties.create', (s) => call(s.url, 'policies.create', JSON.stringify({ name: 'Hold parties', priority: 10, match: { tools: ['parties.create'] }, effect: 'hold' }), s.owner));
    await step('202, held for approval', (s) => call(s.url, 'parties.create', JSON.stringify({ name: 'Tres', kind: 'customer' }), s.owner));
    await step('202, held under an Idempotency-Key', (s) => call(s.url, 'parties.create', JSON.stringify({ name: 'Cuatro', kind: 'customer' }), s.owner, { 'Idempotency-Key': 'held-1' }));
    await step('202, its replay', (s) => call(s.url, 'parties.create', JSON.stringify({ name: 'Cuatro', kind: 'customer' }), s.owner, { 'Idempotency-Key': 'held-1' }));

    // Revocation takes effect at once (CONTRACT §9): a key kept by the gateway, with a block of counts held, is refused on its next call.
    for (let i = 1; i <= 3; i++) await step(`200, the key to revoke #${i}`, (s) => call(s.url, 'parties.list', list, s.doomed.api_key));
    await step('200, revoked', (s) => call(s.url, 'api_keys.revoke', JSON.stringify({ id: s.doomed.id }), s.owner));
    for (let i = 1; i <= 2; i++) await step(`401, revoked #${i}`, (s) => call(s.url, 'parties.list', list, s.doomed.api_key));

    // The credential's quota (256 a minute) spent: counted from blocks, then one by one, then refused.
    for (const name of ['fast', 'general'] as const) {
      const side = sides[name];
      for (let i = 1; i <= 258; i++) answers[name][`quota #${i}`] = await call(side.url, 'parties.list', list, side.spent);
    }
    expect(answers.fast['quota #256'].status).toBe(200);
    expect(answers.fast['quota #257'].status).toBe(429);

    // The fair share: one call of a workspace at once and none waiting, so of a burst some are refused (429, Retry-After).
    for (const name of ['fast', 'general'] as const) {
      const side = sides[name];
      const burst = await Promise.all(Array.from({ length: 6 }, () => call(side.url, 'parties.list', list, side.owner)));
      const refused = burst.find((a) => a.status === 429);
      expect(refused, `${name}: a burst of 6 with one slot and no queue`).toBeDefined();
      answers[name]['429, the fair share'] = { ...refused!, headers: { ...refused!.headers, ratelimit: '<counted in the burst>' } };
    }

    // The owner down: nothing reached it (503, the attempt in the gateway's ledger), on a key with a block held.
    for (let i = 1; i <= 2; i++) await step(`200, before crm stops #${i}`, (s) => call(s.url, 'parties.list', list, s.owner));
    await sys.killSubgraph('crm');
    try {
      // The gateways' kept-alive connections to it closed with it; the next call opens a new one, refused.
      await new Promise((r) => setTimeout(r, 500));
      for (let i = 1; i <= 3; i++) await step(`503, crm down #${i}`, (s) => call(s.url, 'parties.list', list, s.owner));
    } finally {
      await sys.restartSubgraph('crm');
    }

    for (const label of Object.keys(answers.fast)) expect(answers.general[label], label).toEqual(answers.fast[label]);
    expect(Object.keys(answers.general)).toEqual(Object.keys(answers.fast));
    // The cases are what their labels say (the comparison above would pass on two gateways answering 500 alike).
    for (const [label, answer] of Object.entries(answers.fast)) {
      const status = /^(\d{3})/.exec(label)?.[1];
      if (status) expect(answer.status, `${label}: ${answer.body}`).toBe(Number(status));
    }
    expect(JSON.parse(answers.fast['422, the schema with its field'].body)).toMatchObject({ code: 'invalid_input', field: '/limit' });
    expect(answers.fast['200, replayed'].headers['idempotent-replayed']).toBe('true');
    expect(answers.fast['202, its replay'].headers['idempotent-replayed']).toBe('true');
    expect(JSON.parse(answers.fast['202, held for approval'].body)).toMatchObject({ status: 'pending_approval' });
    expect(JSON.parse(answers.fast['409, the key with another input'].body)).toMatchObject({ code: 'idempotency_conflict' });
    expect(JSON.parse(answers.fast['503, crm down #1'].body)).toMatchObject({ code: 'unavailable' });
    expect(answers.fast['503, crm down #1'].headers['ledger-receipt']).toBe('<receipt>');
    expect(answers.fast['200 #3'].headers['ledger-receipt']).toBe('<receipt>');
    expect(answers.fast['quota #1'].headers.ratelimit).toBe('"credential";r=255;t=<s>');
    expect(answers.fast['quota #258'].status).toBe(429);
  });
});
