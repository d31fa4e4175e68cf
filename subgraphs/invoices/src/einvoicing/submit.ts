import { CuadraError } from '@cuadra/shared';
import type { Connection } from 'mongoose';
import { sandboxReceive, type AuthorityAnswer } from './sandbox.ts';

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
  const body = (await res.json().catch(() => null)) as AuthorityAnswer | null;
  if (!body || typeof body.is_valid !== 'boolean') {
    throw new CuadraError('unavailable', `The e-invoicing authority answered ${res.status} without a readable verdict; send again later.`);
  }
  return body;
}
