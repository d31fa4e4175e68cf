import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';

/*
 * Signed links of the public marketing endpoints (one-click unsubscribe, consent confirmation, a
 * site visitor's e-mail code): the payload in base64url and an HMAC-SHA-256 over it with a key
 * derived (HKDF) from the deployment's seal key, so no link can be made or edited without it and no
 * new secret has to be configured. Compared in constant time.
 */

let linkKey: Buffer | undefined;

function key(): Buffer {
  if (linkKey) return linkKey;
  const raw = process.env.CUADRA_SEAL_KEY;
  if (!raw) throw new Error('CUADRA_SEAL_KEY is required to sign marketing links.');
  linkKey = Buffer.from(hkdfSync('sha256', Buffer.from(raw, 'base64'), Buffer.alloc(0), 'cuadra-marketing-links/v1', 32));
  return linkKey;
}

function mac(purpose: string, body: string): Buffer {
  return createHmac('sha256', key()).update(`${purpose}\n${body}`).digest();
}

/** A signed token for `purpose` carrying `payload`. */
export function signLink(purpose: string, payload: Record<string, string>): string {
  const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
  return `${body}.${mac(purpose, body).toString('base64url')}`;
}

/** The payload of a token signed for `purpose`, or null (edited, forged, another purpose). */
export function openLink(purpose: string, token: string): Record<string, string> | null {
  if (token.length > 1_000) return null;
  const [body, sig] = token.split('.');
  if (!body || !sig) return null;
  const given = Buffer.from(sig, 'base64url');
  const wanted = mac(purpose, body);
  if (given.length !== wanted.length || !timingSafeEqual(given, wanted)) return null;
  try {
    const payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as unknown;
    if (!payload || typeof payload !== 'object' || Array.isArray(payload)) return null;
    return Object.values(payload).every((v) => typeof v === 'string') ? payload as Record<string, string> : null;
  } catch {
    return null;
  }
}
