import { randomBytes } from 'node:crypto';
import { Agent, fetch as fetchFrom } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OWN_SYSTEM_SETTINGS, startTestSystem, type TestSystem } from './helpers/system.ts';

/*
 * Abuse limits on hosted sites' form posts (issue 36): per visitor address (whatever the site) and per
 * site (whoever sends), counted in Redis by the gateway before the post reaches the marketing service.
 * A system of the file's own, with small quotas (3 posts per address, 5 per site, per 10 minutes);
 * visitors are told apart by the loopback address their connections leave from.
 */

let sys: TestSystem;
let key: string;
const run = randomBytes(3).toString('hex');
const visitors = new Map<string, Agent>();

/** A tool's output, as the workspace's key unless another is given (sys.output throws on any other status). */
function ok(tool: string, input: unknown, k = key) {
  return sys.output(tool, input, k);
}

/** A visitor at `address` sends the form of the site `slug`. */
async function post(address: string, slug: string, email: string) {
  if (!visitors.has(address)) visitors.set(address, new Agent({ localAddress: address }));
  const res = await fetchFrom(`${sys.gatewayUrl}/s/${slug}/`, {
    method: 'POST', dispatcher: visitors.get(address), headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ form: '0', email, consent: 'yes' }).toString(),
  });
  return { status: res.status, retryAfter: res.headers.get('retry-after'), csp: res.headers.get('content-security-policy'), html: await res.text() };
}

async function site(slug: string) {
  const made = (await ok('sites.create', { slug, name: 'Panadería Sol', pages: [{ path: '/', title: 'Panadería Sol', blocks: [{ type: 'form', fields: ['email'], consent_text: 'Autorizo el tratamiento de mis datos (Ley 1581 de 2012).' }] }] })).site;
  await ok('sites.publish', { id: made.id });
  return made as { id: string; slug: string };
}

const leads = async (id: string) => ((await ok('sites.leads', { id, limit: 200 })).rows as unknown[]).length;

beforeAll(async () => {
  sys = await startTestSystem('site-limits', OWN_SYSTEM_SETTINGS);
  ({ api_key: key } = await sys.workspace('Panadería Sol SAS'));
});

afterAll(async () => {
  await Promise.all([...visitors.values()].map((a) => a.close()));
  await sys?.stop();
});

describe('form posts of hosted sites are rate limited', () => {
  it('per visitor address and per site: over either, 429 with Retry-After and nothing kept', async () => {
    const a = await site(`sol-${run}`);
    const b = await site(`sol-norte-${run}`);

    // Visitor 1: three posts are taken, the fourth is refused before it reaches the service.
    for (let i = 0; i < 3; i++) expect((await post('127.3.0.1', a.slug, `uno${i}@ejemplo.co`)).status).toBe(200);
    const over = await post('127.3.0.1', a.slug, 'uno3@ejemplo.co');
    expect(over.status).toBe(429);
    expect(Number(over.retryAfter)).toBeGreaterThan(500);
    expect(Number(over.retryAfter)).toBeLessThanOrEqual(600);
    expect(over.html).toContain('Demasiados envíos');
    expect(over.csp).toMatch(/^default-src 'none'/);
    expect(await leads(a.id)).toBe(3);
    // The address is spent on every site, and reading pages is not limited.
    expect((await post('127.3.0.1', b.slug, 'uno4@ejemplo.co')).status).toBe(429);
    const page = await fetchFrom(`${sys.gatewayUrl}/s/${a.slug}/`, { dispatcher: visitors.get('127.3.0.1') });
    expect(page.status).toBe(200);

    // Visitor 2 fills the site's quota (5): its third post is refused although its own address has one left.
    expect((await post('127.3.0.2', a.slug, 'dos0@ejemplo.co')).status).toBe(200);
    expect((await post('127.3.0.2', a.slug, 'dos1@ejemplo.co')).status).toBe(200);
    const full = await post('127.3.0.2', a.slug, 'dos2@ejemplo.co');
    expect(full.status).toBe(429);
    expect(Number(full.retryAfter)).toBeGreaterThan(0);
    expect(await leads(a.id)).toBe(5);

    // Another site counts apart: a third visitor's post to it is taken.
    expect((await post('127.3.0.3', b.slug, 'tres@ejemplo.co')).status).toBe(200);
    expect(await leads(b.id)).toBe(1);
  });
});
