import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CuadraError, OWNER_ANSWER_HEADER, peersFromEnv, TOOL_INVOKE_PATH } from '@cuadra/shared';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { SentJson, SubgraphForwarder } from '../src/forward.ts';
import { subgraphReplicaUrls, subgraphUrl } from '../src/subgraphs.ts';

// Issue 33, "Out of one machine": a subgraph may be given several URLs, taken in turn. What is under
// test here is the transport between the gateway and a replica (a refused connection against one
// that took the request and died), so the replicas are plain HTTP listeners that count what reaches
// them and answer as an owner does; the whole product on replicas runs in test/replicas/.

interface Replica {
  url: string;
  calls: number;
  /** The request bodies it got, as text. */
  bodies: string[];
  server: Server;
}

const servers: Server[] = [];

/** A replica that answers every invoke as its owner (200), or takes the request and drops the connection (`dies`). */
async function replica(behaviour: 'answers' | 'dies' = 'answers'): Promise<Replica> {
  const r: Replica = { url: '', calls: 0, bodies: [], server: createServer() };
  r.server.on('request', (req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => { body += c.toString('utf8'); });
    req.on('end', () => {
      if (req.url !== TOOL_INVOKE_PATH) return void res.writeHead(404).end();
      r.calls++;
      r.bodies.push(body);
      if (behaviour === 'dies') return void req.socket.destroy();
      res.writeHead(200, { 'content-type': 'application/json', [OWNER_ANSWER_HEADER]: '1' }).end(JSON.stringify({ output: { echoed: JSON.parse(body).tool } }));
    });
  });
  await new Promise<void>((resolve) => r.server.listen(0, '127.0.0.1', resolve));
  servers.push(r.server);
  r.url = `http://127.0.0.1:${(r.server.address() as AddressInfo).port}`;
  return r;
}

/** An address nothing listens on: a replica that is down (connections refused). */
async function downReplica(): Promise<string> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

const forwarders: SubgraphForwarder[] = [];
function forwarder(urls: string[]): SubgraphForwarder {
  const f = new SubgraphForwarder({ invoices: urls });
  forwarders.push(f);
  return f;
}

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'ok';
  } catch (err) {
    return err instanceof CuadraError ? err.code : `not a CuadraError: ${String(err)}`;
  }
}

afterEach(async () => {
  await Promise.all(forwarders.splice(0).map((f) => f.close()));
});
afterAll(async () => {
  await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
});

describe('SUBGRAPH_<NAME>_URL', () => {
  it('lists replicas separated by commas; the first is the one composition and health read', () => {
    const env = { SUBGRAPH_INVOICES_URL: 'http://10.0.0.5:4102/, http://10.0.0.6:4102' };
    expect(subgraphReplicaUrls('invoices', env)).toEqual(['http://10.0.0.5:4102', 'http://10.0.0.6:4102']);
    expect(subgraphUrl('invoices', env)).toBe('http://10.0.0.5:4102');
    // One URL, as before; none, the default port on loopback.
    expect(subgraphReplicaUrls('crm', { SUBGRAPH_CRM_URL: 'http://crm:4101' })).toEqual(['http://crm:4101']);
    expect(subgraphReplicaUrls('crm', {})).toEqual(['http://127.0.0.1:4101']);
  });

  it('given to a subgraph as a list, its peer reads go to the first replica (not to the list read as one URL)', () => {
    const peers = peersFromEnv({ CUADRA_SERVICE_KEY: 'k', CUADRA_SERVICE_PUBLIC_KEY: 'p', SUBGRAPH_CRM_URL: 'http://10.0.0.5:4101/ ,http://10.0.0.6:4101' });
    expect(peers?.urls.crm).toBe('http://10.0.0.5:4101');
  });
});

describe('the forwarder on replicas', () => {
  it('takes the replicas in turn', async () => {
    const [a, b] = await Promise.all([replica(), replica()]);
    const f = forwarder([a.url, b.url]);
    for (let i = 0; i < 6; i++) expect((await f.invoke('invoices', 'invoices.create', {}, 'assertion')).status).toBe(200);
    expect([a.calls, b.calls]).toEqual([3, 3]);
  });

  it('skips a replica that refuses connections: every call is answered by the other, none lost or doubled', async () => {
    const [down, b] = await Promise.all([downReplica(), replica()]);
    const f = forwarder([down, b.url]);
    const codes = await Promise.all(Array.from({ length: 5 }, () => codeOf(f.invoke('invoices', 'invoices.create', {}, 'assertion'))));
    expect(codes).toEqual(['ok', 'ok', 'ok', 'ok', 'ok']);
    expect(b.calls).toBe(5);
  });

  it('never sends a call that may have reached a replica to another: outcome_unknown, the other replica untouched', async () => {
    const [dying, b] = await Promise.all([replica('dies'), replica()]);
    const f = forwarder([dying.url, b.url]);
    // The first call goes to the dying replica (the turn starts at the first listed).
    expect(await codeOf(f.invoke('invoices', 'payments.record', {}, 'assertion', { idempotencyKey: 'k-1' }))).toBe('outcome_unknown');
    expect(dying.calls).toBe(1);
    expect(b.calls).toBe(0);
  });

  it('answers unavailable only when no replica could be reached', async () => {
    const f = forwarder([await downReplica(), await downReplica()]);
    expect(await codeOf(f.invoke('invoices', 'invoices.create', {}, 'assertion'))).toBe('unavailable');
  });
});

describe('the /invoke envelope (issue 33, the hop)', () => {
  it('carries a sent input as the text it came in, parsed by the owner to the very value the gateway checked; any other input as JSON.stringify writes the envelope', async () => {
    const r = await replica();
    const f = forwarder([r.url]);
    // Spacing, a repeated member (the last wins, on both sides), an own "__proto__" member, escapes
    // and a line separator: JSON.parse on the gateway and on the owner read the same value.
    const text = ' {"limit" : 8, "limit": 9, "__proto__": {"admin": true}, "name": "\\u00d1and\\u00fa \\ud83d\\ude00\u2028"}\n';
    const checked = JSON.parse(text) as Record<string, unknown>;
    expect((await f.invoke('invoices', 'parties.list', new SentJson(checked, text), 'assertion', { idempotencyKey: 'k-7' })).status).toBe(200);
    expect(r.bodies[0]).toBe(`{"tool":"parties.list","input":${text},"idempotencyKey":"k-7","approvalId":null}`);
    const received = (JSON.parse(r.bodies[0]) as { input: Record<string, unknown> }).input;
    expect(Object.keys(received)).toEqual(['limit', '__proto__', 'name']);
    expect(JSON.stringify(received)).toBe(JSON.stringify(checked));
    expect(received.limit).toBe(9);
    expect(received.name).toBe('Ñandú 😀\u2028');
    // An input handed over as a value (MCP, the canvas): the envelope JSON.stringify writes, member for member.
    expect((await f.invoke('invoices', 'invoices.post', { id: 'inv_1', note: 'é' }, 'assertion', { approvalId: 'apr_1', dryRun: true })).status).toBe(200);
    expect(r.bodies[1]).toBe(JSON.stringify({ tool: 'invoices.post', input: { id: 'inv_1', note: 'é' }, idempotencyKey: null, approvalId: 'apr_1', dryRun: true }));
  });
});

/** A replica answering every invoke with `answer` (raw: the status line and headers as written, the body in pieces). */
async function rawReplica(answer: (res: ServerResponse, req: IncomingMessage) => void): Promise<{ url: string; headers: IncomingHttpHeaders[] }> {
  const seen: IncomingHttpHeaders[] = [];
  const server = createServer((req, res) => {
    seen.push(req.headers);
    req.resume();
    req.on('end', () => answer(res, req));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, headers: seen };
}

describe("the owner's answer as it comes off the socket (issue 33, the hop: undici's dispatcher, not request())", () => {
  it('reads the owner mark, receipt, replay and Retry-After whatever their case, and keeps the body bytes as sent in pieces', async () => {
    const body = JSON.stringify({ tool: 'parties.list', output: { items: Array.from({ length: 300 }, (_, i) => ({ id: `pty_${i}`, name: `Ñandú ${i} 😀` })) } });
    const bytes = Buffer.from(body);
    const r = await rawReplica((res) => {
      // No Content-Length: chunked, in three writes, so the body arrives in more than one piece.
      res.writeHead(200, ['Content-Type', 'application/json', 'Cuadra-Owner-Answer', '1', 'Ledger-Receipt', '7;abc;sig', 'IDEMPOTENT-REPLAYED', 'true', 'Retry-After', '3', 'X-Other', 'x']);
      res.write(bytes.subarray(0, 10));
      setTimeout(() => {
        res.write(bytes.subarray(10, 5000));
        setTimeout(() => res.end(bytes.subarray(5000)), 5);
      }, 5);
    });
    const answer = await forwarder([r.url]).invoke('invoices', 'parties.list', {}, 'the-assertion');
    expect(answer.status).toBe(200);
    expect(answer.receipt).toBe('7;abc;sig');
    expect(answer.replayed).toBe(true);
    expect(answer.retryAfter).toBe('3');
    expect(answer.json.equals(bytes)).toBe(true);
    expect(answer.body).toEqual(JSON.parse(body));
    // What went out: the assertion and the content type (no vouch without a seal key).
    expect(r.headers[0]['cuadra-assertion']).toBe('the-assertion');
    expect(r.headers[0]['content-type']).toBe('application/json');
    expect(r.headers[0]['cuadra-checked']).toBeUndefined();
  });

  it('takes an answer without the owner mark for the route, not the owner: a 429 is the fair share (with its Retry-After), anything else internal', async () => {
    const share = await rawReplica((res) => res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '2' }).end('{"error":"busy"}'));
    const f = forwarder([share.url]);
    const refused = await f.invoke('invoices', 'invoices.create', {}, 'assertion').then(() => null, (err: CuadraError) => err);
    expect(refused?.code).toBe('rate_limited');
    expect((refused?.extra as { headers?: Record<string, string> }).headers).toEqual({ 'Retry-After': '2' });
    const route = await rawReplica((res) => res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"no assertion"}'));
    expect(await codeOf(forwarder([route.url]).invoke('invoices', 'invoices.create', {}, 'assertion'))).toBe('internal');
  });

  it('a replica that dies after its head, mid-body: outcome_unknown (the call reached it), never a partial answer', async () => {
    const r = await rawReplica((res, req) => {
      res.writeHead(200, { 'content-type': 'application/json', 'cuadra-owner-answer': '1', 'content-length': '100' });
      res.write('{"tool":"x",');
      setTimeout(() => req.socket.destroy(), 5);
    });
    expect(await codeOf(forwarder([r.url]).invoke('invoices', 'payments.record', {}, 'assertion'))).toBe('outcome_unknown');
  });
});
