// The forwarder keeps an owner's answer in memory until it is complete (issue 33, ready14): an owner
// (or a bug) answering a huge body must not grow the gateway without bound. Over real HTTP, an owner
// that streams far more than MAX_ANSWER has its connection dropped once the cap is passed, and the
// caller hears a clean `outcome_unknown` (the call reached its owner; its outcome did not come back),
// no stack; an answer under the cap is relayed whole.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CuadraError, OWNER_ANSWER_HEADER, TOOL_INVOKE_PATH } from '@cuadra/shared';
import { afterAll, afterEach, expect, it } from 'vitest';
import { MAX_ANSWER, SubgraphForwarder } from '../src/forward.ts';

const cap = MAX_ANSWER.bytes;
const servers: Server[] = [];
const forwarders: SubgraphForwarder[] = [];
afterEach(() => {
  MAX_ANSWER.bytes = cap;
});
afterAll(async () => {
  await Promise.all(forwarders.map((f) => f.close()));
  for (const s of servers) s.closeAllConnections();
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
});

/** An owner answering `bytes` of JSON in 64 KiB writes (honouring backpressure); `sent` counts what it handed to its socket, `closed` resolves when the connection closes. */
async function owner(bytes: number): Promise<{ url: string; sent: () => number; closed: Promise<void> }> {
  let sent = 0;
  let closedResolve: () => void = () => undefined;
  const closed = new Promise<void>((resolve) => { closedResolve = resolve; });
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.url !== TOOL_INVOKE_PATH) return void res.writeHead(404).end();
      res.on('close', () => closedResolve());
      res.writeHead(200, { 'content-type': 'application/json', [OWNER_ANSWER_HEADER]: '1' });
      const head = '{"output":{"text":"';
      const tail = '"}}';
      res.write(head);
      sent += head.length;
      const chunk = 'x'.repeat(65_536);
      const more = (): void => {
        while (sent + chunk.length + tail.length <= bytes) {
          if (res.destroyed) return;
          sent += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', more);
        }
        const rest = 'x'.repeat(Math.max(0, bytes - sent - tail.length));
        sent += rest.length + tail.length;
        res.end(rest + tail);
      };
      more();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, sent: () => sent, closed };
}

function forwarder(url: string): SubgraphForwarder {
  const f = new SubgraphForwarder({ invoices: url });
  forwarders.push(f);
  return f;
}

it('drops an answer past MAX_ANSWER (the owner\'s connection closed before it sent it all) and answers outcome_unknown, no stack', async () => {
  MAX_ANSWER.bytes = 1_048_576;
  const huge = await owner(64 * 1_048_576);
  const err = await forwarder(huge.url).invoke('invoices', 'documents.get', { id: 'doc_1' }, 'assertion').then(() => null, (e: unknown) => e);
  expect(err).toBeInstanceOf(CuadraError);
  const e = err as CuadraError;
  expect(e.code).toBe('outcome_unknown');
  expect(e.message).toMatch(/answered more than the gateway relays/);
  const body = e.toBody();
  expect(JSON.stringify(body)).not.toMatch(/stack|at .*\.ts:\d+/);
  await huge.closed;
  // The owner could not hand it all over: the gateway stopped reading and closed the connection.
  expect(huge.sent()).toBeLessThan(64 * 1_048_576);
}, 60_000);

it('relays an answer under the cap whole', async () => {
  MAX_ANSWER.bytes = 1_048_576;
  const fits = await owner(1_000_000);
  const answer = await forwarder(fits.url).invoke('invoices', 'documents.get', { id: 'doc_1' }, 'assertion');
  expect(answer.status).toBe(200);
  expect(answer.json.length).toBe(1_000_000);
  expect((answer.body.output as { text: string }).text.length).toBe(1_000_000 - '{"output":{"text":""}}'.length);
}, 60_000);

it('keeps a default cap the largest legitimate answer fits under', () => {
  // A stored document is at most 512 KiB decoded: ~0.7 MB in base64 plus its fields.
  expect(cap).toBeGreaterThanOrEqual(16 * 1_048_576);
});
