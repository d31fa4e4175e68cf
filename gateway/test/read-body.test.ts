import { CuadraError } from '@cuadra/shared';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readJsonBody } from '../src/http.ts';

// The REST invoke's body reader (issue 33, the hop): a body that has arrived whole with its head is
// taken at once, without listeners; one still streaming in is read as before. Both must answer the
// same: the value and its text, the limit, a malformed body, and a connection kept alive afterwards.
describe('readJsonBody', () => {
  let server: Server;
  let port: number;
  /** How the last request's body was read: whole already, or still streaming when the reader began. */
  const seen: string[] = [];

  beforeAll(async () => {
    server = createServer((req: IncomingMessage, res) => {
      const limit = Number(req.headers['x-limit'] ?? 1024);
      // As the REST invoke does: the reader starts after a few awaits, on the same turn.
      void (async () => {
        await null;
        seen.push(req.complete || req.readableLength === Number(req.headers['content-length']) ? 'whole' : 'streaming');
        try {
          const body = await readJsonBody(req, limit);
          const text = JSON.stringify({ value: body.value, text: body.text });
          res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
        } catch (err) {
          const code = err instanceof CuadraError ? err.code : 'other';
          res.writeHead(400, { 'content-type': 'text/plain', 'content-length': code.length }).end(code);
        }
      })();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  /** Sends raw bytes on one connection, in pieces with a pause between them, and reads the answers until `answers` came. */
  async function exchange(pieces: string[], answers = 1): Promise<{ status: number; body: string }[]> {
    const socket: Socket = connect(port, '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    let received = '';
    // Bytes as latin1 characters, so Content-Length counts what slice counts; bodies decoded as UTF-8 below.
    socket.on('data', (d: Buffer) => { received += d.toString('latin1'); });
    for (const [i, piece] of pieces.entries()) {
      if (i > 0) await new Promise((r) => setTimeout(r, 50));
      socket.write(piece);
    }
    const parsed = () => {
      const out: { status: number; body: string }[] = [];
      let rest = received;
      while (rest.length > 0) {
        const end = rest.indexOf('\r\n\r\n');
        if (end < 0) break;
        const head = rest.slice(0, end);
        const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
        if (rest.length < end + 4 + length) break;
        out.push({ status: Number(head.split(' ')[1]), body: Buffer.from(rest.slice(end + 4, end + 4 + length), 'latin1').toString('utf8') });
        rest = rest.slice(end + 4 + length);
      }
      return out;
    };
    for (let waited = 0; parsed().length < answers && waited < 5_000; waited += 10) await new Promise((r) => setTimeout(r, 10));
    socket.destroy();
    return parsed();
  }

  const post = (body: string, extra = '') => `POST /x HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n${extra}\r\n${body}`;

  it('takes a body that came with its head at once, and keeps the connection for the next request', async () => {
    seen.length = 0;
    const answers = await exchange([post('{"limit":8}') + post('{"name":"Ñandú"}')], 2);
    expect(seen).toEqual(['whole', 'whole']);
    expect(answers).toEqual([
      { status: 200, body: JSON.stringify({ value: { limit: 8 }, text: '{"limit":8}' }) },
      { status: 200, body: JSON.stringify({ value: { name: 'Ñandú' }, text: '{"name":"Ñandú"}' }) },
    ]);
  });

  it('reads a body still streaming in, as before', async () => {
    seen.length = 0;
    const body = '{"limit":8}';
    const head = `POST /x HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n`;
    const answers = await exchange([head, body.slice(0, 4), body.slice(4)]);
    expect(seen).toEqual(['streaming']);
    expect(answers).toEqual([{ status: 200, body: JSON.stringify({ value: { limit: 8 }, text: body }) }]);
  });

  it('refuses a whole body over the limit, with or without a declared length', async () => {
    seen.length = 0;
    const big = JSON.stringify({ name: 'x'.repeat(100) });
    const chunked = `POST /x HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\nx-limit: 50\r\n\r\n${big.length.toString(16)}\r\n${big}\r\n0\r\n\r\n`;
    // Chunked: no length to compare, so it is read as it streams in (its end is marked after the first await).
    expect(await exchange([chunked])).toEqual([{ status: 400, body: 'body_too_large' }]);
    // With a length, the body is whole at once: refused by the limit without being streamed.
    seen.length = 0;
    expect(await exchange([post(big, 'x-limit: 50\r\n')])).toEqual([{ status: 400, body: 'body_too_large' }]);
    expect(seen).toEqual(['whole']);
  });

  it('answers an empty body as {}, and refuses malformed JSON and UTF-8 either way', async () => {
    expect(await exchange([post('')])).toEqual([{ status: 200, body: JSON.stringify({ value: {}, text: '{}' }) }]);
    expect(await exchange([post('{"limit":')])).toEqual([{ status: 400, body: 'invalid_input' }]);
    const head = `POST /x HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 9\r\n\r\n`;
    expect(await exchange([head, '{"limit":'])).toEqual([{ status: 400, body: 'invalid_input' }]);
    const socket = connect(port, '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    let received = '';
    socket.on('data', (d: Buffer) => { received += d.toString('latin1'); });
    socket.write(Buffer.concat([Buffer.from(`POST /x HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 4\r\n\r\n`), Buffer.from([0x22, 0xff, 0xfe, 0x22])]));
    for (let waited = 0; !received.includes('invalid_input') && waited < 5_000; waited += 10) await new Promise((r) => setTimeout(r, 10));
    socket.destroy();
    expect(received).toContain('invalid_input');
  });
});
