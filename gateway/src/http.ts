import { CuadraError, toCuadraError, type Logger } from '@cuadra/shared';
import type { Request, Response } from 'express';
import getRawBody from 'raw-body';

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
export function sendRefusal(res: Response, err: unknown, ctx: { publicUrl: string; log: Logger; headers?: Record<string, string>; challenge?: Challenge }): void {
  const error = toCuadraError(err);
  if (error.code === 'internal' || error.code === 'unavailable') ctx.log.error({ err: error.cause ?? error }, error.message);
  for (const [k, v] of Object.entries(ctx.headers ?? {})) res.setHeader(k, v);
  const challenge = (ctx.challenge ?? restChallenge(ctx.publicUrl))(error);
  if (challenge) res.setHeader('WWW-Authenticate', challenge);
  const retry = (error.extra as { headers?: Record<string, string> }).headers;
  if (retry) for (const [k, v] of Object.entries(retry)) res.setHeader(k, v);
  res.status(error.status).json(error.toBody());
}

/**
 * Reads a JSON body of at most `limit` bytes: a declared Content-Length over the limit is
 * refused before reading; a streamed body is cut off as soon as it passes the limit.
 */
export async function readJsonBody(req: Request, limit: number): Promise<unknown> {
  const declared = req.headers['content-length'] ? Number(req.headers['content-length']) : undefined;
  if (declared !== undefined && declared > limit) {
    throw new CuadraError('body_too_large', `The input is larger than this tool accepts (${limit} bytes).`);
  }
  const type = req.headers['content-type'];
  if (declared !== 0 && type !== undefined && !/^application\/([a-z.+-]*\+)?json\b/i.test(type)) {
    throw new CuadraError('invalid_input', 'Send the input as application/json.', { field: '' });
  }
  let bytes: Buffer;
  try {
    bytes = await getRawBody(req, { limit, length: declared });
  } catch (err) {
    if ((err as { type?: string }).type === 'entity.too.large') throw new CuadraError('body_too_large', `The input is larger than this tool accepts (${limit} bytes).`);
    throw new CuadraError('invalid_input', 'The request body could not be read.', { field: '', cause: err });
  }
  let raw: string;
  try {
    // Malformed UTF-8 is refused, not silently replaced: what is stored is what was sent.
    raw = UTF8.decode(bytes);
  } catch {
    throw new CuadraError('invalid_input', 'The request body is not valid UTF-8.', { field: '' });
  }
  if (raw.trim() === '') return {};
  try {
    return JSON.parse(raw);
  } catch {
    throw new CuadraError('invalid_input', 'The request body is not valid JSON.', { field: '' });
  }
}
