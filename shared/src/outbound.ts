import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import { Agent, fetch as undiciFetch } from 'undici';
import { CuadraError } from './errors.ts';

// Outbound requests to addresses a workspace names (a client's metadata document, a model
// provider, an MCP server, an OAuth token endpoint) may reach only public addresses: a name is
// checked at connect time, so a DNS answer that changes between a check and the connection
// (rebinding) cannot slip past.

// Addresses an outbound request may never reach: private, loopback, link-local,
// shared, documentation, multicast and reserved ranges, in both families (SSRF).
const blocked = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12], ['192.0.0.0', 24],
  ['192.0.2.0', 24], ['192.88.99.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24], ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) blocked.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8], ['2001:db8::', 32], ['100::', 64], ['2001::', 23], ['2002::', 16],
] as const) blocked.addSubnet(net, prefix, 'ipv6');

/** True when an address is a public unicast one (IPv4-mapped and NAT64 forms are judged by their IPv4 part). */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return !blocked.check(address, 'ipv4');
  if (family !== 6) return false;
  const lower = address.toLowerCase();
  const mapped = /^(?:::ffff:|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (mapped) return isPublicAddress(mapped[1]);
  if (/^(::ffff:|64:ff9b::|::)[0-9a-f]{1,4}:[0-9a-f]{1,4}$/.test(lower)) return false; // hex-written mapped/compatible forms
  return !blocked.check(address, 'ipv6');
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** DNS lookup that refuses a name resolving to any address `allowed` refuses; used at connect time, so a rebinding answer cannot slip past. */
export const checkedLookup = (allowed: (address: string) => boolean) => (hostname: string, options: { all?: boolean }, callback: LookupCallback): void => {
  dnsLookup(hostname, { all: true }, (err, addresses) => {
    if (err) return callback(err, '');
    if (addresses.length === 0 || addresses.some((a) => !allowed(a.address))) {
      const refused = Object.assign(new Error(`${hostname} resolves to an address that is not public`), { code: 'EPRIVATEADDR' });
      return callback(refused, '');
    }
    if (options.all) return callback(null, addresses);
    callback(null, addresses[0].address, addresses[0].family);
  });
};


/**
 * Whether outbound requests may reach private and loopback addresses (`CUADRA_OUTBOUND_PRIVATE=allow`):
 * a developer's own model server or MCP server on this machine, and the tests' servers. Off unless set.
 */
export function privateOutboundAllowed(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.CUADRA_OUTBOUND_PRIVATE === 'allow';
}

/*
 * Requests to addresses a workspace names (model providers, MCP servers, OAuth token endpoints,
 * CalDAV servers): http(s) only, and public addresses only, checked at connect time — unless
 * `CUADRA_OUTBOUND_PRIVATE=allow` (a developer's own servers, the tests').
 */
let publicOnly: Agent | undefined;
let anywhere: Agent | undefined;

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

/** The URL without trailing slashes, or `invalid_input` at `field` saying why it cannot be used. */
export function checkOutboundUrl(raw: string, field: string): string {
  const problem = outboundUrlProblem(raw);
  if (problem) throw new CuadraError('invalid_input', `${raw.slice(0, 200)}: ${problem}`, { field });
  return raw.replace(/\/+$/, '');
}

/**
 * `fetch` for a workspace-named address: every request's URL is judged again (a redirect or a
 * server-given href cannot lead elsewhere) and its connection reaches only public addresses.
 * `trusted`: this deployment's own server (the embedded model).
 */
export function outboundFetch(trusted = false): typeof fetch {
  const dispatcher = trusted || privateOutboundAllowed()
    ? (anywhere ??= new Agent({ connect: { timeout: 10_000 } }))
    : (publicOnly ??= new Agent({ connect: { lookup: checkedLookup(isPublicAddress) as never, timeout: 10_000 } }));
  return ((input: Parameters<typeof fetch>[0], init?: RequestInit) => {
    const target = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    if (!trusted) {
      const problem = outboundUrlProblem(target);
      if (problem) return Promise.reject(new CuadraError('unavailable', `${problem} Nothing was sent.`, { beforeAnyEffect: true }));
    }
    return undiciFetch(input as never, { ...(init as object), dispatcher } as never);
  }) as unknown as typeof fetch;
}
