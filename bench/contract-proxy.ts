// Baseline (h) of the invoke bench: the bare proxy (g) doing by hand the per-call work the contract
// asks of the gateway on a cached, leased call — and nothing else: no framework, no pipeline, no
// classes, no promise between the pieces. Set against (a), it splits the gateway's own CPU into what
// the contract costs in plain Node (h − g) and what the gateway's code adds around it (a − h).
// Per call, as the gateway does it on the bench's path (an API key it has seen, a block of counts
// held, a read tool of the gateway's catalog):
//   the Authorization header parsed, the key's SHA-256 compared in constant time with the stored
//   digest, its expiry checked; the count taken from memory (the gateway's block) with its RateLimit
//   headers; the tool's name read from the path and looked up; Content-Type checked, the body read
//   (as the bare proxy reads it), decoded as strict UTF-8 and parsed; the `/invoke` envelope written
//   around the input's own text; the gateway's assertion (signed once, reused for half its life) and
//   the vouch (HMAC over assertion and body) sent; the owner's answer relayed as bytes with
//   RateLimit, RateLimit-Policy, Cuadra-Version and Ledger-Receipt.
// CONTRACT_NO_CRYPTO=1 (variant (i)) leaves out the two hashes — the key's SHA-256 (the key is
// compared as text) and the vouch (none sent: the owner then checks the call in full, its own CPU) —
// to show what OpenSSL costs per call inside a busy process, against the same calls in a loop.
// Not done here: the schema validation (ajv, compiled: ~0.6 % of the gateway's busy samples), the
// fair share, the idempotency-key check, and every refusal path.
import { createHash, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import { Pool } from 'undici';
import { CHECKED_CALL_HEADER, checkedCallsFromEnv } from '../shared/src/checked-call.ts';
import { ASSERTION_HEADER, ASSERTION_TTL_SECONDS, signAssertion } from '../shared/src/credentials.ts';
import type { Principal } from '../shared/src/principal.ts';

const target = new Pool(process.env.TARGET_URL!, { connections: 64, keepAliveTimeout: 30_000 });
const keyDigest = Buffer.from(process.env.KEY_DIGEST!, 'hex');
const principal = JSON.parse(process.env.PRINCIPAL!) as Principal;
const vouching = checkedCallsFromEnv()!;
const noCrypto = process.env.CONTRACT_NO_CRYPTO === '1';
const keyText = process.env.KEY_TEXT ?? '';
const tools = new Map([['parties.list', { maxBytes: 65_536 }]]);
const UTF8 = new TextDecoder('utf-8', { fatal: true });
const INVOKE = /^\/v1\/tools\/[^/]+:invoke$/;
let assertion = { token: '', until: 0 };
let used = 0;

function refuse(res: http.ServerResponse, status: number, code: string): void {
  const body = JSON.stringify({ error: code, code });
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

const server = http.createServer((req, res) => {
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
  if (noCrypto) {
    if (!bearer || bearer[1] !== keyText) return refuse(res, 401, 'unauthenticated');
  } else {
    const digest = bearer ? createHash('sha256').update(bearer[1]).digest() : null;
    if (!digest || digest.length !== keyDigest.length || !timingSafeEqual(digest, keyDigest)) return refuse(res, 401, 'unauthenticated');
  }
  used++;
  const rate = { 'RateLimit-Policy': '"credential";q=100000000;w=60', RateLimit: `"credential";r=${100_000_000 - used};t=60`, 'Cuadra-Version': '2026-01-01' };
  const url = req.url ?? '';
  if (req.method !== 'POST' || !INVOKE.test(url)) return refuse(res, 404, 'not_found');
  const tool = decodeURIComponent(url.slice('/v1/tools/'.length, -':invoke'.length));
  const entry = tools.get(tool);
  if (!entry) return refuse(res, 404, 'unknown_tool');
  const type = req.headers['content-type'];
  if (type !== undefined && !/^application\/([a-z.+-]*\+)?json\b/i.test(type)) return refuse(res, 400, 'invalid_input');
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const bytes = Buffer.concat(chunks);
    if (bytes.length > entry.maxBytes) return refuse(res, 413, 'body_too_large');
    let text: string;
    try {
      text = UTF8.decode(bytes);
      JSON.parse(text);
    } catch {
      return refuse(res, 400, 'invalid_input');
    }
    const now = Date.now();
    if (assertion.until <= now) assertion = { token: signAssertion(principal, process.env.ASSERTION_KEY!), until: now + (ASSERTION_TTL_SECONDS * 1000) / 2 };
    const body = `{"tool":${JSON.stringify(tool)},"input":${text},"idempotencyKey":null,"approvalId":null}`;
    target.request({
      path: '/invoke', method: 'POST', body,
      headers: noCrypto
        ? { 'content-type': 'application/json', [ASSERTION_HEADER]: assertion.token }
        : { 'content-type': 'application/json', [ASSERTION_HEADER]: assertion.token, [CHECKED_CALL_HEADER]: vouching.vouch(assertion.token, body) },
    }).then(async (answer) => {
      const json = Buffer.from(await answer.body.arrayBuffer());
      const receipt = answer.headers['ledger-receipt'];
      res.writeHead(answer.statusCode, { ...rate, ...(typeof receipt === 'string' ? { 'Ledger-Receipt': receipt } : {}), 'content-type': 'application/json; charset=utf-8', 'content-length': json.length });
      res.end(json);
    }, () => {
      refuse(res, 502, 'unavailable');
    });
  });
});
server.keepAliveTimeout = 65_000;
server.listen(Number(process.env.PORT), '127.0.0.1', () => process.stdout.write('READY\n'));
process.once('SIGTERM', () => process.exit(0));
