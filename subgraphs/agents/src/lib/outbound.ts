import { isIP } from 'node:net';
import { CuadraError } from '@cuadra/shared';
import { checkedLookup, isPublicAddress, privateOutboundAllowed } from '@cuadra/shared/outbound';
import { Agent, fetch as undiciFetch } from 'undici';

/**
 * Requests this subgraph makes to addresses a workspace names (model providers, MCP servers,
 * OAuth token endpoints): http(s) only, and public addresses only, checked at connect time (a
 * DNS answer that changes after a check cannot slip past) — unless `CUADRA_OUTBOUND_PRIVATE=allow`
 * (a developer's own servers, the tests').
 */
const publicOnly = new Agent({ connect: { lookup: checkedLookup(isPublicAddress) as never, timeout: 10_000 } });
const anywhere = new Agent({ connect: { timeout: 10_000 } });

/** Why a URL a workspace gives cannot be called from here, or null when it can. */
export function outboundUrlProblem(raw: string, env: NodeJS.ProcessEnv = process.env): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'It is not a URL.';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'Only http and https URLs are called.';
  if (url.username || url.password) return 'Credentials do not go in the URL; give them as a key or a connection.';
  if (privateOutboundAllowed(env)) return null;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (host === 'localhost' || host.endsWith('.localhost') || (isIP(host) && !isPublicAddress(host))) return 'The address is not public.';
  return null;
}

/** The URL, or `invalid_input` at `field` saying why it cannot be used. */
export function checkOutboundUrl(raw: string, field: string): string {
  const problem = outboundUrlProblem(raw);
  if (problem) throw new CuadraError('invalid_input', `${raw.slice(0, 200)}: ${problem}`, { field });
  return raw.replace(/\/+$/, '');
}

/** `fetch` for a workspace-named address (the `openai` client's and the MCP client's). `trusted`: this deployment's own embedded model. */
export function outboundFetch(trusted = false): typeof fetch {
  const dispatcher = trusted || privateOutboundAllowed() ? anywhere : publicOnly;
  return ((input: Parameters<typeof fetch>[0], init?: RequestInit) => {
    const target = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    if (!trusted) {
      const problem = outboundUrlProblem(target);
      if (problem) return Promise.reject(new CuadraError('unavailable', `${problem} Nothing was sent.`, { beforeAnyEffect: true }));
    }
    return undiciFetch(input as never, { ...(init as object), dispatcher } as never);
  }) as unknown as typeof fetch;
}
