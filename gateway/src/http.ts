import { CuadraError, toCuadraError, type Logger } from '@cuadra/shared';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import getRawBody from 'raw-body';
import { SentJson } from './forward.ts';

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/** Where the protected-resource metadata lives (RFC 9728), for 401 challenges. */
export function resourceMetadataUrl(publicUrl: string): string {
  return `${publicUrl}/.well-known/oauth-protected-resource`;
}

/** The `WWW-Authenticate` challenge of a 401 or a scope refusal (RFC 6750, RFC 9728); none for other refusals. */
export type Challenge = (error: CuadraError) => string | undefined;

/** The challenge of the REST and GraphQL surfaces. */
function restChallenge(publicUrl: string): Challenge {
  return (error) => {
    if (error.code === 'unauthenticated') return `Bearer resource_metadata="${resourceMetadataUrl(publicUrl)}"`;
    if (error.code === 'insufficient_scope') {
      const scope = (error.extra as { scope?: string }).scope ?? 'tools';
      return `Bearer error="insufficient_scope", scope="${scope}", resource_metadata="${resourceMetadataUrl(publicUrl)}"`;
    }
    return undefined;
  };
}

/**
 * Sends a refusal with the contract's body and status (every HTTP surface answers through here),
 * and the challenge headers the contract asks for on 401 and on scope refusals (`challenge`: a
 * surface's own, MCP's; REST's by default). Unknown errors are logged, never shown.
 */
export function sendRefusal(res: ServerResponse, err: unknown, ctx: { publicUrl: string; log: Logger; headers?: Record<string, string>; challenge?: Challenge }): void {
  const error = toCuadraError(err);
  if (error.code === 'internal' || error.code === 'unavailable') ctx.log.error({ err: error.cause ?? error }, error.message);
  for (const [k, v] of Object.entries(ctx.headers ?? {})) res.setHeader(k, v);
  const challenge = (ctx.challenge ?? restChallenge(ctx.publicUrl))(error);
  if (challenge) res.setHeader('WWW-Authenticate', challenge);
  const retry = (error.extra as { headers?: Record<string, string> }).headers;
  if (retry) for (const [k, v] of Object.entries(retry)) res.setHeader(k, v);
  // What express's res.json sends, on Node's own response too (the REST invoke answers before express).
  const body = JSON.stringify(error.toBody());
  res.statusCode = error.status;
  if (!res.getHeader('content-type')) res.setHeader('content-type', 'application/json; charset=utf-8');
  res.setHeader('content-length', Buffer.byteLength(body));
  res.end(body);
}

/**
 * Reads a JSON body of at most `limit` bytes: a declared Content-Length over the limit is
 * refused before reading; a streamed body is cut off as soon as it passes the limit. Answers the
 * value with the text it was parsed from (no body at all: `{}`).
 */
export async function readJsonBody(req: IncomingMessage, limit: number): Promise<SentJson> {
  const now = readJsonBodyNow(req, limit);
  if (now !== null) return now;
  const declared = declaredLength(req);
  let bytes: Buffer;
  try {
    bytes = await getRawBody(req, { limit, length: declared });
  } catch (err) {
    if ((err as { type?: string }).type === 'entity.too.large') throw tooLarge(limit);
    throw new CuadraError('invalid_input', 'The request body could not be read.', { field: '', cause: err });
  }
  return parseJsonBody(bytes);
}

/**
 * {@link readJsonBody} without waiting: the body when all of it has already arrived (see
 * {@link arrivedWhole}), null when it is still to come (nothing read then). Refuses as
 * `readJsonBody` does: the declared size and type before anything is read.
 */
export function readJsonBodyNow(req: IncomingMessage, limit: number): SentJson | null {
  const declared = declaredLength(req);
  if (declared !== undefined && declared > limit) throw tooLarge(limit);
  const type = req.headers['content-type'];
  if (declared !== 0 && type !== undefined && !/^application\/([a-z.+-]*\+)?json\b/i.test(type)) {
    throw new CuadraError('invalid_input', 'Send the input as application/json.', { field: '' });
  }
  const bytes = arrivedWhole(req, declared);
  if (bytes === null) return null;
  if (bytes.length > limit) throw tooLarge(limit);
  return parseJsonBody(bytes);
}

function declaredLength(req: IncomingMessage): number | undefined {
  return req.headers['content-length'] ? Number(req.headers['content-length']) : undefined;
}

function tooLarge(limit: number): CuadraError {
  return new CuadraError('body_too_large', `The input is larger than this tool accepts (${limit} bytes).`);
}

/** A body's bytes as strict UTF-8 JSON, with the text it was parsed from. */
function parseJsonBody(bytes: Buffer): SentJson {
  let raw: string;
  try {
    // Malformed UTF-8 is refused, not silently replaced: what is stored is what was sent.
    raw = UTF8.decode(bytes);
  } catch {
    throw new CuadraError('invalid_input', 'The request body is not valid UTF-8.', { field: '' });
  }
  // No body at all (no bytes) is the empty object (CONTRACT.md §10); anything present must be a JSON object.
  if (bytes.length === 0) return new SentJson({}, '{}');
  try {
    return new SentJson(JSON.parse(raw), raw);
  } catch {
    throw new CuadraError('invalid_input', 'The request body is not valid JSON.', { field: '' });
  }
}

const EMPTY = Buffer.alloc(0);

/**
 * The body, taken at once when all of it has already arrived and nobody has read from it: a small
 * request comes in the same packet as its head, and Node's parser has buffered its bytes before the
 * first await (its end is marked a moment later). No listeners, no promise, no turn of the event
 * loop (issue 33, the hop). Null otherwise — then it is read as it streams in. With a Content-Length,
 * exactly that many bytes must be buffered; without one (chunked), the message must be complete.
 * What is left (the end) flows away, so Node's server sees the request consumed.
 */
function arrivedWhole(req: IncomingMessage, declared: number | undefined): Buffer | null {
  if (req.readableFlowing !== null || req.readableEncoding !== null || req.readableEnded) return null;
  if (declared === undefined ? !req.complete : req.readableLength !== declared) return null;
  const length = req.readableLength;
  const bytes = length === 0 ? EMPTY : (req.read(length) as Buffer | null);
  if (bytes === null) return null;
  req.resume();
  return bytes;
}

/** How much of a request the server reads, and for how long, after refusing its oversized head (then the connection is closed). */
const DRAIN = { bytes: 4 * 1024 * 1024, ms: 5_000 };

/**
 * Answers what Node's HTTP parser refuses before any route sees it with the contract's JSON
 * refusal instead of Node's bare status line (issue 31, finding 14): a request line past the
 * server's 16 KiB head limit (a tool name of 20 KB) → 414 `uri_too_long`; headers past it → 431
 * `headers_too_large` (anything else malformed keeps Node's bare 400). The rest of the request
 * is then read and dropped (up to 4 MiB or 5 s) before the connection closes, so the client reads
 * the answer instead of a connection reset.
 */
export function answerClientErrors(server: Server): void {
  const answered = new WeakSet<Duplex>();
  server.on('clientError', (err: Error & { code?: string; rawPacket?: Buffer }, socket: Duplex) => {
    // The parser keeps reporting the same request as more of it arrives: answered once.
    if (answered.has(socket)) return;
    answered.add(socket);
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    if (err.code !== 'HPE_HEADER_OVERFLOW') {
      // Not HTTP at all, or a timeout: Node's own answer (a bare 400, 408 or 413), then close.
      const line = err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? '408 Request Timeout' : err.code === 'HPE_CHUNK_EXTENSIONS_OVERFLOW' ? '413 Payload Too Large' : '400 Bad Request';
      socket.end(`HTTP/1.1 ${line}\r\nConnection: close\r\n\r\n`);
      return;
    }
    // Which part made the head too long: the request line (the path, a tool's name) when it is longer
    // than all the header lines read with it (or still unfinished), else the headers.
    const raw = err.rawPacket ?? Buffer.alloc(0);
    const lineEnd = raw.indexOf('\r\n');
    const headEnd = raw.indexOf('\r\n\r\n');
    const lineLength = lineEnd < 0 ? raw.length : lineEnd;
    const headersLength = lineEnd < 0 ? 0 : (headEnd < 0 ? raw.length : headEnd) - lineEnd;
    const error = lineLength <= headersLength
      ? new CuadraError('headers_too_large', 'The request headers are larger than this server reads (16 KiB with the request line).')
      : new CuadraError('uri_too_long', 'The request line is longer than this server reads (16 KiB with the headers); no tool has a name that long.');
    const body = JSON.stringify(error.toBody());
    const reason = error.status === 414 ? 'URI Too Long' : 'Request Header Fields Too Large';
    socket.end(`HTTP/1.1 ${error.status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
    let drained = 0;
    const stop = setTimeout(() => socket.destroy(), DRAIN.ms);
    stop.unref();
    socket.on('data', (chunk: Buffer) => {
      drained += chunk.length;
      if (drained > DRAIN.bytes) socket.destroy();
    });
    socket.once('close', () => clearTimeout(stop));
    socket.resume();
  });
}
