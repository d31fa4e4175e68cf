import { CuadraError } from '@cuadra/shared';
import type { Connection } from 'mongoose';
import type { AuthorityAnswer } from '@cuadra/shared/dian';
import { sandboxReceive } from './sandbox.ts';

/** Where documents go: `EINVOICING_ENDPOINT`, or `builtin` (the in-process sandbox) when unset. */
export function authorityEndpoint(env: NodeJS.ProcessEnv = process.env): string {
  return env.EINVOICING_ENDPOINT?.trim() || 'builtin';
}

/**
 * Submits one UBL document to the authority and returns its answer. A transport failure is
 * `unavailable` (nothing was accepted as far as we know; the authority dedupes by CUFE, so the
 * caller may simply send again).
 */
export async function submitToAuthority(db: Connection, xml: string, endpoint = authorityEndpoint()): Promise<AuthorityAnswer> {
  if (endpoint === 'builtin') return sandboxReceive(db, xml);
  let res: Response;
  try {
    res = await fetch(endpoint, { method: 'POST', headers: { 'content-type': 'application/xml; charset=utf-8' }, body: xml, signal: AbortSignal.timeout(15_000) });
  } catch (err) {
    throw new CuadraError('unavailable', 'The e-invoicing authority cannot be reached right now; nothing was accepted. Send again later.', { cause: err });
  }
  const body = (await res.json().catch(() => null)) as Partial<Record<keyof AuthorityAnswer, unknown>> | null;
  if (!body || typeof body.is_valid !== 'boolean') {
    throw new CuadraError('unavailable', `The e-invoicing authority answered ${res.status} without a readable verdict; send again later.`);
  }
  return readAnswer(body as Record<string, unknown> & { is_valid: boolean });
}

/** Only the fields of an authority's answer we know, each of its type: nothing else it sends reaches a caller or a stored invoice. */
function readAnswer(body: Record<string, unknown> & { is_valid: boolean }): AuthorityAnswer {
  const text = (v: unknown, max = 2000) => (typeof v === 'string' ? v.slice(0, max) : null);
  return {
    is_valid: body.is_valid,
    status_code: body.status_code === '00' ? '00' : '99',
    status_description: text(body.status_description) ?? '',
    document_key: text(body.document_key, 200),
    track_id: text(body.track_id, 200),
    errors: Array.isArray(body.errors) ? body.errors.filter((e): e is string => typeof e === 'string').slice(0, 100).map((e) => e.slice(0, 2000)) : [],
    // DIAN answers an accepted document with its ApplicationResponse (XML); kept whole or not at all.
    application_response: typeof body.application_response === 'string' && body.application_response.length <= 1_000_000 ? body.application_response : null,
  };
}
