import { isIP, type Socket } from 'node:net';
import { checkedLookup, isPublicAddress } from '@cuadra/shared/outbound';
import { Agent, buildConnector, request } from 'undici';

/** How long one attempt may take, connection to last byte of the answer's head. */
const ATTEMPT_TIMEOUT_MS = 15_000;

/** What one POST came to: the status the endpoint answered, or why there was none; and the address actually connected to. */
export interface SendOutcome {
  status: number | null;
  error: string | null;
  address: string | null;
}

/** An error of the connection refused for its address (not public). */
const PRIVATE = 'EPRIVATEADDR';

/**
 * The SSRF-filtering agent webhook deliveries go through. A name is resolved at connect time and
 * refused when any address it resolves to is not public (private, loopback, link-local, ULA,
 * reserved: shared/src/outbound.ts); and once connected, the socket's own remote address is checked
 * again, so a DNS answer that changes between a check and the connection (rebinding), or a resolver
 * that lies, cannot slip past. `allowPrivate` (`CUADRA_OUTBOUND_PRIVATE=allow`: the tests, a
 * developer's own receiver) lifts both checks; it is off unless set.
 */
export function deliveryAgent(allowPrivate: boolean, connected: (address: string) => void = () => undefined): Agent {
  const connector = buildConnector({ timeout: ATTEMPT_TIMEOUT_MS, ...(allowPrivate ? {} : { lookup: checkedLookup(isPublicAddress) as never }) });
  return new Agent({
    connect(options, callback) {
      const host = options.hostname.replace(/^\[|\]$/g, '');
      if (!allowPrivate && isIP(host) && !isPublicAddress(host)) {
        callback(Object.assign(new Error(`${host} is not a public address`), { code: PRIVATE }), null);
        return;
      }
      connector(options, (err, socket) => {
        if (err) return callback(err, null);
        const address = (socket as Socket).remoteAddress ?? '';
        if (!allowPrivate && !isPublicAddress(address)) {
          socket!.destroy();
          return callback(Object.assign(new Error(`the connection reached ${address}, which is not a public address`), { code: PRIVATE }), null);
        }
        connected(address);
        return callback(null, socket!);
      });
    },
  });
}

/** Why a request failed, in a line a person can act on (no stack). */
function reasonOf(err: unknown): string {
  const e = err as { name?: string; code?: string; message?: string; cause?: { code?: string; message?: string } };
  const inner = e.cause ?? e;
  if (inner.code === PRIVATE || e.code === PRIVATE) return `Refused: ${inner.message ?? e.message} (deliveries go to public addresses only).`;
  if (e.name === 'TimeoutError' || inner.code === 'UND_ERR_CONNECT_TIMEOUT' || inner.code === 'UND_ERR_HEADERS_TIMEOUT') return `No answer within ${ATTEMPT_TIMEOUT_MS / 1000} s.`;
  return `${inner.code ?? 'error'}: ${String(inner.message ?? e.message ?? err).slice(0, 200)}`;
}

/**
 * POSTs one signed message. Redirects are not followed (a 3xx is a failed attempt: a redirect
 * could lead anywhere); the answer's body is read and dropped, up to what undici buffers.
 */
export async function postMessage(url: string, headers: Record<string, string>, body: string, allowPrivate: boolean): Promise<SendOutcome> {
  let address: string | null = null;
  // One connection per attempt: its address is checked (and logged) every time, never reused from an earlier check.
  const agent = deliveryAgent(allowPrivate, (a) => { address = a; });
  try {
    const res = await request(url, {
      method: 'POST', dispatcher: agent, headers: { 'content-type': 'application/json', 'user-agent': 'Cuadra-Webhooks/1', ...headers }, body,
      headersTimeout: ATTEMPT_TIMEOUT_MS, bodyTimeout: ATTEMPT_TIMEOUT_MS,
    });
    await res.body.dump({ limit: 64 * 1024 }).catch(() => undefined);
    return { status: res.statusCode, error: res.statusCode >= 200 && res.statusCode < 300 ? null : `The endpoint answered ${res.statusCode}.`, address };
  } catch (err) {
    return { status: null, error: reasonOf(err), address };
  } finally {
    void agent.destroy().catch(() => undefined);
  }
}
