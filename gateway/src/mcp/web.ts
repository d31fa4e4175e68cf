import { Readable } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import type { Request as ExpressRequest, Response as ExpressResponse } from 'express';

/** Headers Node computes itself for the new request (the body is passed whole). */
const HOP_HEADERS = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive']);

/**
 * The web-standard `Request` the MCP SDK serves, built from an express request whose body the
 * router already read. `signal` aborts when the client goes away.
 */
export function toWebRequest(req: ExpressRequest, url: string, body: string | undefined, signal: AbortSignal): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || HOP_HEADERS.has(name)) continue;
    if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    else headers.set(name, value);
  }
  return new Request(url, { method: req.method, headers, body: req.method === 'POST' ? (body ?? '') : undefined, signal });
}

/** Writes a web `Response` (a JSON body or an SSE stream) to the express response. */
export async function sendWebResponse(res: ExpressResponse, response: Response): Promise<void> {
  res.status(response.status);
  response.headers.forEach((value, name) => res.setHeader(name, value));
  if (!response.body) {
    res.end();
    return;
  }
  res.flushHeaders();
  const stream = Readable.fromWeb(response.body as unknown as NodeReadableStream<Uint8Array>);
  // A client that disconnects cancels the SDK's stream, which ends its request.
  res.once('close', () => stream.destroy());
  await new Promise<void>((resolve) => {
    stream.once('end', resolve);
    stream.once('error', () => {
      res.destroy(); // a stream that failed midway cannot be ended cleanly
      resolve();
    });
    stream.once('close', resolve);
    stream.pipe(res);
  });
}
