import { createPublicKey, randomBytes, type JsonWebKey } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { simpleParser } from 'mailparser';
import type { Connection } from 'mongoose';
import { connectDatabase } from '@cuadra/shared';
import { Agent, fetch as fetchFrom } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import path from 'node:path';
import { axeProblems, openBrowserContext, SHOTS } from './helpers/browser.ts';
import { messagesTo, uniqueAddress } from './helpers/mail.ts';
import { mcpRequest, mcpSession } from './helpers/mcp-session.ts';
import { peopleOf, signInToNewApp } from './helpers/oauth.ts';
import { startTestSystem, type TestSystem } from './helpers/system.ts';
import { EVENT_WAIT_MS } from './helpers/until.ts';

/*
 * `sites.login` (issue 36): a site's visitor signs in with a code e-mailed through the real SMTP
 * server and gets an ID token for that site only (audience the site, scope `sites.login`), signed
 * by the gateway's one token key and checked here against its published JWKS with another library's
 * verifier path (jsonwebtoken on a key rebuilt from the JWK). The token reaches no tool on any
 * surface; a `sites.login` access token is told it lacks a tool scope; `sites.edit` reaches only `sites.*`.
 */

let sys: TestSystem;
let key: string;
let workspaceId: string;
let slug: string;
let gatewayDb: Connection;
let marketingDb: Connection;
const run = randomBytes(3).toString('hex');

beforeAll(async () => {
  sys = await startTestSystem('site-login');
  ({ api_key: key, workspace_id: workspaceId } = await sys.workspace('Cerámica Boyacá SAS'));
  slug = `ceramica-${run}`;
  const site = await sys.output('sites.create', { slug, name: 'Cerámica Boyacá', pages: [{ path: '/', title: 'Inicio', blocks: [{ type: 'heading', text: 'Hola' }] }] }, key);
  await sys.output('sites.publish', { id: site.site.id }, key);
  ({ db: gatewayDb } = await peopleOf(sys));
  marketingDb = await connectDatabase(process.env.MONGO_URL!, sys.gatewayDb.replace(/_gateway$/, '_marketing'));
});

afterAll(async () => {
  await gatewayDb?.close();
  await marketingDb?.close();
  await sys?.stop();
});

/** POSTs JSON to a public site path of the gateway. */
async function post(pathname: string, body: unknown): Promise<{ status: number; headers: Headers; body: any }> {
  const res = await fetch(new URL(pathname, sys.gatewayUrl), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch { /* not JSON: kept as text for the assertion to show */ }
  return { status: res.status, headers: res.headers, body: parsed };
}

/** The six-digit code in the newest message to `to`, waiting for exim to deliver it. */
async function codeFor(to: string, count = 1): Promise<string> {
  for (const deadline = Date.now() + EVENT_WAIT_MS; Date.now() < deadline;) {
    const msgs = messagesTo(to);
    if (msgs.length >= count) {
      const code = /\b(\d{6})\b/.exec(msgs[0].split(/\r?\n\r?\n/).slice(1).join('\n'))?.[1];
      if (code) return code;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no sign-in code reached ${to}`);
}

/** The marketing database's login challenges (what is kept at rest). */
function challenges() {
  return marketingDb.collection('site_login_codes');
}

/** Signs `email` in to the site; answers the token response. */
async function signIn(email: string, count = 1) {
  const start = await post(`/s/${slug}/login/start`, { email });
  expect(start.status).toBe(200);
  return post(`/s/${slug}/login/verify`, { challenge: start.body.challenge, code: await codeFor(email, count) });
}

describe('sites.login', () => {
  it('signs a visitor in with an e-mailed code and gives an ID token for that site only', async () => {
    const email = uniqueAddress('lucia@visitantes.example');
    const start = await post(`/s/${slug}/login/start`, { email });
    expect(start.status).toBe(200);
    expect(start.headers.get('cache-control')).toBe('no-store');
    expect(start.body).toEqual({ challenge: expect.stringMatching(/^[A-Za-z0-9_-]{22,}$/), expires_in: 600 });
    const code = await codeFor(email);
    // Delivered by the real SMTP server, in Spanish, naming the site (read with mailparser, not our sender).
    const mail = await simpleParser(messagesTo(email)[0]);
    expect(mail.subject).toBe('Tu código para entrar a Cerámica Boyacá');
    expect(mail.from?.value[0].name).toBe('Cerámica Boyacá');
    expect(mail.text).toContain(`    ${code}\n`);

    // At rest: no code, only a keyed hash of it (HMAC-SHA256 under the challenge's own salt).
    const kept = await challenges().findOne({ _id: start.body.challenge as never });
    expect(kept).not.toBeNull();
    expect(JSON.stringify(kept)).not.toContain(code);
    expect(kept!.code_hash).toMatch(/^[0-9a-f]{64}$/);

    // A wrong code is refused at its field, and counted.
    const wrongCode = code === '000000' ? '000001' : '000000';
    const wrong = await post(`/s/${slug}/login/verify`, { challenge: start.body.challenge, code: wrongCode });
    expect({ status: wrong.status, code: wrong.body.code, field: wrong.body.field }).toEqual({ status: 422, code: 'invalid_input', field: '/code' });
    // A code is only good for the site it was asked on.
    const other = await post(`/s/otro-sitio-${run}/login/verify`, { challenge: start.body.challenge, code });
    expect(other.status).toBe(422);

    const signed = await post(`/s/${slug}/login/verify`, { challenge: start.body.challenge, code });
    expect(signed.status).toBe(200);
    expect(signed.headers.get('cache-control')).toBe('no-store');
    expect(signed.body).toEqual({ id_token: expect.any(String), token_type: 'N_A', scope: 'sites.login', expires_in: 3600 });

    // Verified against the gateway's published key set, as a site would.
    const jwks = (await sys.fetch('/.well-known/jwks.json')).body as { keys: (JsonWebKey & { kid: string })[] };
    const header = JSON.parse(Buffer.from(signed.body.id_token.split('.')[0], 'base64url').toString());
    expect(header).toMatchObject({ alg: 'ES256', typ: 'JWT' });
    const jwk = jwks.keys.find((k) => k.kid === header.kid)!;
    const claims = jwt.verify(signed.body.id_token, createPublicKey({ key: jwk, format: 'jwk' }), { algorithms: ['ES256'], issuer: sys.gatewayUrl, audience: `${sys.gatewayUrl}/s/${slug}` }) as jwt.JwtPayload;
    expect(claims).toMatchObject({ email, email_verified: true, scope: 'sites.login', amr: ['otp'] });
    // The subject is the visitor at this site: stable, and not their address.
    expect(claims.sub).toMatch(/^v_[A-Za-z0-9_-]{22}$/);
    expect(claims.sub).not.toContain(email.split('@')[0]);
    expect(claims.exp! - claims.iat!).toBe(3600);

    // The code works once.
    const again = await post(`/s/${slug}/login/verify`, { challenge: start.body.challenge, code });
    expect({ status: again.status, code: again.body.code, field: again.body.field }).toEqual({ status: 422, code: 'invalid_input', field: '/challenge' });
    // Signing in again gives the same subject.
    const second = await signIn(email, 2);
    expect(second.status).toBe(200);
    expect((jwt.decode(second.body.id_token) as jwt.JwtPayload).sub).toBe(claims.sub);

    // Revocation (RFC 7009) by whoever holds the token: from then on the gateway takes it for no one. Before: it held for its hour.
    const asVisitor = async (token: string) => (await fetch(`${sys.gatewayUrl}/s/${slug}/login`, { headers: { cookie: `cuadra_site_visitor=${token}` } })).text();
    expect(await asVisitor(second.body.id_token)).toContain(`Entraste como <strong>${email}</strong>`);
    // Revocations count against the forms' limit per visitor address: these come from an address of their own (a loopback alias).
    const holder = new Agent({ localAddress: `127.${60 + (process.pid % 50)}.${Math.floor(Math.random() * 250)}.11` });
    const revoke = (site: string, body: string, type = 'application/json') =>
      fetchFrom(new URL(`/s/${site}/login/revoke`, sys.gatewayUrl), { method: 'POST', headers: { 'content-type': type }, body, dispatcher: holder });
    // Another site's endpoint leaves it alone (it is no token of that site), and says nothing either way (§2.2).
    expect((await revoke(`otro-sitio-${run}`, JSON.stringify({ token: second.body.id_token }))).status).toBe(200);
    expect(await asVisitor(second.body.id_token)).toContain(`Entraste como <strong>${email}</strong>`);
    const missing = await revoke(slug, '{}');
    expect([missing.status, ((await missing.json()) as { field?: string }).field]).toEqual([422, '/token']);
    const revoked = await revoke(slug, new URLSearchParams({ token: second.body.id_token }).toString(), 'application/x-www-form-urlencoded');
    expect([revoked.status, revoked.headers.get('cache-control')]).toEqual([200, 'no-store']);
    expect(await asVisitor(second.body.id_token)).not.toContain('Entraste como');
    // Only that token: the first one still names the visitor.
    expect(await asVisitor(signed.body.id_token)).toContain(`Entraste como <strong>${email}</strong>`);
    // Kept until the token would have expired, in MongoDB as well as Redis: the gateway's durable copy outlives Redis losing it.
    const jti = (jwt.decode(second.body.id_token) as jwt.JwtPayload).jti!;
    const remembered = await gatewayDb.collection('oauth_revocations').findOne({ _id: `sites:revoked-id-token:${jti}` as never });
    expect(Math.abs(remembered!.expires_at.getTime() - ((jwt.decode(second.body.id_token) as jwt.JwtPayload).exp! + 60) * 1000)).toBeLessThan(5_000);
    await holder.close();
  });

  it('limits the attempts at a code and honours its expiry', async () => {
    const email = uniqueAddress('mateo@visitantes.example');
    const start = await post(`/s/${slug}/login/start`, { email });
    const code = await codeFor(email);
    const wrongCode = code === '999999' ? '999998' : '999999';
    for (let i = 0; i < 5; i++) expect((await post(`/s/${slug}/login/verify`, { challenge: start.body.challenge, code: wrongCode })).body.field).toBe('/code');
    // Five wrong tries used the challenge up: the right code no longer signs in.
    const late = await post(`/s/${slug}/login/verify`, { challenge: start.body.challenge, code });
    expect({ status: late.status, field: late.body.field }).toEqual({ status: 422, field: '/challenge' });

    const fresh = await post(`/s/${slug}/login/start`, { email });
    const freshCode = await codeFor(email, 2);
    await challenges().updateOne({ _id: fresh.body.challenge as never }, { $set: { expires_at: new Date(0) } });
    const expired = await post(`/s/${slug}/login/verify`, { challenge: fresh.body.challenge, code: freshCode });
    expect({ status: expired.status, field: expired.body.field }).toEqual({ status: 422, field: '/challenge' });
  });

  it('refuses a bad address at its field and an unpublished site, sending nothing', async () => {
    const bad = await post(`/s/${slug}/login/start`, { email: 'no es un correo' });
    expect({ status: bad.status, code: bad.body.code, field: bad.body.field }).toEqual({ status: 422, code: 'invalid_input', field: '/email' });
    const email = uniqueAddress('nadie@visitantes.example');
    const missing = await post(`/s/no-existe-${run}/login/start`, { email });
    expect({ status: missing.status, code: missing.body.code }).toEqual({ status: 404, code: 'not_found' });
    expect(messagesTo(email)).toEqual([]);
  });

  it('the visitor\'s ID token reaches no tool on any surface', async () => {
    const { body } = await signIn(uniqueAddress('sofia@visitantes.example'));
    const token = body.id_token as string;
    const refusals = [
      await sys.fetch('/v1/tools', { key: token }),
      await sys.fetch('/v1/tools/sites.list:invoke', { method: 'POST', key: token, body: {} }),
      await sys.fetch('/v1/tools/parties.list:invoke', { method: 'POST', key: token, body: {} }),
      await mcpSession(sys.gatewayUrl, token) as { status: number; body: any },
      await sys.fetch('/graphql', { method: 'POST', key: token, body: { query: '{ __typename }' } }),
      await sys.fetch('/v1/events', { key: token }),
    ];
    // Not an access token for this API (its audience is the site, its type an ID token): 401 unauthenticated everywhere.
    expect(refusals.map((r) => [r.status, r.body?.code ?? r.body?.error?.data?.code ?? r.body?.errors?.[0]?.extensions?.code])).toEqual(Array(6).fill([401, 'unauthenticated']));
  });

  it('a sites.login access token is told it reaches no tool; sites.edit reaches sites.* only, on every surface', async () => {
    const { people } = await peopleOf(sys);
    const person = { email: uniqueAddress('dueña@ceramica.example'), password: 'una clave larga de verdad' };
    const user = await people.createUser({ email: person.email, name: 'Dueña', password: person.password });
    await people.setMembership(workspaceId, user._id, 'owner');

    const login = await signInToNewApp(sys.gatewayUrl, person, 'Portal de clientes', 'sites.login');
    const gql = (token: string, query: string) => sys.fetch('/graphql', { method: 'POST', key: token, body: { query } });
    const loginRefusals = [
      await sys.fetch('/v1/tools', { key: login }),
      await sys.invoke('sites.list', {}, login),
      await mcpSession(sys.gatewayUrl, login) as { status: number; body: any },
      await gql(login, '{ __typename }'),
    ];
    expect(loginRefusals.map((r) => [r.status, r.body?.code ?? r.body?.error?.data?.code])).toEqual(Array(4).fill([403, 'insufficient_scope']));

    const edit = await signInToNewApp(sys.gatewayUrl, person, 'Editor del sitio', 'sites.edit');
    const listed = (await sys.fetch('/v1/tools', { key: edit })).body.tools.map((t: { name: string }) => t.name) as string[];
    expect(listed.length).toBeGreaterThan(3);
    expect(listed.filter((n) => !n.startsWith('sites.'))).toEqual([]);
    expect(listed).toEqual(expect.arrayContaining(['sites.pages.create', 'sites.pages.update', 'sites.pages.delete', 'sites.pages.list', 'sites.pages.reorder']));
    expect((await sys.invoke('sites.list', {}, edit)).status).toBe(200);
    const crm = await sys.invoke('parties.list', {}, edit);
    expect({ status: crm.status, code: crm.body.code }).toEqual({ status: 403, code: 'insufficient_scope' });
    // MCP lists the same, and calls a sites tool.
    const { session } = await mcpSession(sys.gatewayUrl, edit) as { session: string };
    const mcpList = await mcpRequest(sys.gatewayUrl, edit, session, 'tools/list', '{}');
    expect(mcpList.status).toBe(200);
    expect((mcpList.result.tools as { name: string }[]).map((t) => t.name).sort()).toEqual([...listed].sort());
    const mcpCall = await mcpRequest(sys.gatewayUrl, edit, session, 'tools/call', '{"name":"sites.list","arguments":{}}');
    expect(mcpCall.result.isError ?? false).toBe(false);
    const mcpCrm = await mcpRequest(sys.gatewayUrl, edit, session, 'tools/call', '{"name":"parties.list","arguments":{}}');
    // Refused before the call, with the MCP authorization spec's step-up answer: 403 and the scope it needs.
    expect({ status: mcpCrm.status, code: mcpCrm.body.error?.data?.code ?? mcpCrm.body.code }).toEqual({ status: 403, code: 'insufficient_scope' });
    // GraphQL: the sites tool mutation runs through the pipeline; another module's is refused for its scope.
    const viaGraph = await gql(edit, 'mutation { invokeMarketingTool(tool: "sites.list", input: {}) }');
    expect(viaGraph.body.data?.invokeMarketingTool?.status).toBe(200);
    const crmGraph = await gql(edit, 'mutation { invokeCrmTool(tool: "parties.list", input: {}) }');
    expect(crmGraph.body.data?.invokeCrmTool).toMatchObject({ status: 403, body: { code: 'insufficient_scope' } });
  });

  it('signs a visitor in from plain HTML forms with no script (e-mail → code → signed in → out), under the site\'s CSP, in Chromium', async () => {
    const email = uniqueAddress('sofia@visitantes.example');
    const context = await openBrowserContext({ javaScriptEnabled: false, viewport: { width: 900, height: 700 } });
    try {
      const page = await context.newPage();
      const first = await page.goto(`${sys.gatewayUrl}/s/${slug}/login`);
      expect(first!.headers()['content-security-policy']).toMatch(/^default-src 'none'; style-src 'sha256-[^']+'; img-src https:; form-action 'self'/);
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Entrar');
      await page.getByLabel('Correo electrónico').fill(email);
      await page.getByRole('button', { name: 'Enviarme un código' }).click();
      await page.waitForSelector('input[name="code"]');
      expect(await page.locator('main').textContent()).toContain(`Escribe el código que enviamos a ${email}`);
      const code = await codeFor(email);
      // A wrong code: the same form again, saying so, with the tries left (400, nothing signed).
      await page.getByLabel('Código').fill(code === '123456' ? '654321' : '123456');
      const wrong = page.waitForResponse((r) => r.url().endsWith('/login/code'));
      await page.getByRole('button', { name: 'Entrar' }).click();
      expect((await wrong).status()).toBe(400);
      expect(await page.locator('#error').textContent()).toBe('El código no es correcto (te quedan 4 intentos).');
      await page.getByLabel('Código').fill(code);
      await page.getByRole('button', { name: 'Entrar' }).click();
      await page.waitForURL(`**/s/${slug}/login`);
      expect(await page.locator('#signed-in').textContent()).toBe(`Entraste como ${email}.`);
      await page.screenshot({ path: path.join(SHOTS, 'site-login-signed-in.png') });
      // The ID token is kept in an HttpOnly cookie of this site's path only, for an hour, and names the visitor.
      const [cookie] = (await context.cookies()).filter((c) => c.name === 'cuadra_site_visitor');
      expect({ path: cookie.path, httpOnly: cookie.httpOnly, sameSite: cookie.sameSite }).toEqual({ path: `/s/${slug}/`, httpOnly: true, sameSite: 'Lax' });
      expect(Math.round(cookie.expires - Date.now() / 1000)).toBeGreaterThan(3500);
      const claims = jwt.decode(cookie.value) as jwt.JwtPayload;
      expect({ aud: claims.aud, email: claims.email, scope: claims.scope }).toEqual({ aud: `${sys.gatewayUrl}/s/${slug}`, email, scope: 'sites.login' });
      // A forged token (its signature changed) signs no one in.
      const forged = `${cookie.value.slice(0, -4)}${cookie.value.endsWith('AAAA') ? 'BBBB' : 'AAAA'}`;
      const asForged = await fetch(`${sys.gatewayUrl}/s/${slug}/login`, { headers: { cookie: `cuadra_site_visitor=${forged}` } });
      expect(await asForged.text()).not.toContain('Entraste como');
      // Nor is a visitor header taken from the visitor.
      const claimed = await fetch(`${sys.gatewayUrl}/s/${slug}/login`, { headers: { 'x-cuadra-site-visitor': 'intruso@example.com' } });
      expect(await claimed.text()).not.toContain('intruso@example.com');
      await page.getByRole('button', { name: 'Salir' }).click();
      await page.waitForSelector('input[name="email"]');
      expect((await context.cookies()).filter((c) => c.name === 'cuadra_site_visitor')).toEqual([]);
      // Signing out ended the token itself: a copy of it kept elsewhere signs no one in (before: it did, for its hour).
      const copied = await fetch(`${sys.gatewayUrl}/s/${slug}/login`, { headers: { cookie: `cuadra_site_visitor=${cookie.value}` } });
      expect(await copied.text()).not.toContain('Entraste como');
    } finally {
      await context.close();
    }
    // The two forms as axe sees them (it needs script; the pages have none of their own).
    const withScript = await openBrowserContext({ viewport: { width: 900, height: 700 } });
    try {
      const page = await withScript.newPage();
      await page.goto(`${sys.gatewayUrl}/s/${slug}/login`);
      expect(await axeProblems(page)).toEqual([]);
      await page.getByLabel('Correo electrónico').fill(uniqueAddress('axe@visitantes.example'));
      await page.getByRole('button', { name: 'Enviarme un código' }).click();
      await page.waitForSelector('input[name="code"]');
      expect(await axeProblems(page)).toEqual([]);
      await page.screenshot({ path: path.join(SHOTS, 'site-login-code.png') });
    } finally {
      await withScript.close();
    }
  });
});
