import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Redis } from 'ioredis';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../scripts/infra.ts';
import { claimCodeFor, messagesTo, uniqueAddress } from './helpers/mail.ts';
import { openBrowserContext } from './helpers/browser.ts';
import { startTestSystem, type TestSystem } from './helpers/system.ts';
import { EVENT_WAIT_MS } from './helpers/until.ts';

const shots = path.join(process.env.CUADRA_TEST_OUTPUT ?? path.join(repoRoot, 'test-output'), 'screenshots');
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
// People and the mailbox are shared by every file of the system: addresses no other test uses.
const owner = { email: uniqueAddress('camila@cafe-quindio.example'), password: 'arepa con queso 2026' };
const andres = uniqueAddress('andres@cafe-quindio.example');

let sys: TestSystem;
let context: BrowserContext;
let agentKey: string;
let ownerKey: string;
let workspaceId: string;
let claimUrl: string;
const consoleProblems: string[] = [];

beforeAll(async () => {
  mkdirSync(shots, { recursive: true });
  sys = await startTestSystem('wspages');
  const opened = await sys.fetch('/v1/auth/agent-signup', { body: { email: owner.email, workspace_name: 'Café del Quindío', agent_name: 'Asistente contable', name: 'Camila' } });
  expect(opened.status).toBe(201);
  agentKey = opened.body.api_key;
  workspaceId = opened.body.workspace_id;
  claimUrl = opened.body.claim_url;
  ownerKey = (await sys.key(workspaceId, 'owner')).api_key;
  // Debian's Chromium, driven by playwright-core (INFRA.md): a context of this file's own in the run's one browser.
  context = await openBrowserContext({ viewport: { width: 1280, height: 900 } });
  // Six processes start on a shared machine: give them room when it is loaded.
}, 420_000);
afterAll(async () => {
  await context?.close();
  await sys?.stop();
});

async function openPage(): Promise<Page> {
  const page = await context.newPage();
  page.on('console', (m) => {
    if (m.type() === 'error' || /Content Security Policy/i.test(m.text())) consoleProblems.push(m.text());
  });
  page.on('pageerror', (e) => consoleProblems.push(e.message));
  return page;
}

/** axe-core's serious and critical violations on the page as it is now. */
async function axeProblems(page: Page): Promise<string[]> {
  await page.evaluate(AXE_SOURCE);
  const result = await page.evaluate(async () => (globalThis as any).axe.run((globalThis as any).document, { resultTypes: ['violations'] }));
  return (result.violations as { id: string; impact: string; nodes: { target: string[] }[] }[])
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.impact} ${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

async function look(page: Page, name: string): Promise<void> {
  expect(await axeProblems(page)).toEqual([]);
  await page.screenshot({ path: path.join(shots, `${name}.png`), fullPage: true });
}

const h1 = (page: Page) => page.getByRole('heading', { level: 1 }).textContent();

/** The newest message to the owner that mentions `needle`, its quoted-printable body decoded (waits up to EVENT_WAIT_MS). */
async function mailWith(needle: string): Promise<string> {
  for (const deadline = Date.now() + EVENT_WAIT_MS; Date.now() < deadline;) {
    for (const raw of messagesTo(owner.email)) {
      const at = raw.search(/\r?\n\r?\n/);
      const [head, body] = [raw.slice(0, at), raw.slice(at)];
      const text = /Content-Transfer-Encoding: base64/i.test(head)
        ? Buffer.from(body.replace(/\s/g, ''), 'base64').toString('utf8')
        : body.replace(/=\r?\n/g, '').replace(/(?:=[0-9A-F]{2})+/g, (m) => Buffer.from(m.replace(/=/g, ''), 'hex').toString('utf8'));
      if (text.includes(needle)) return text;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return '';
}

/** The newest message to `to` that carries a claim code, waiting up to 10 s for delivery. */
async function claimMailFor(to: string): Promise<string | undefined> {
  await claimCodeFor(to);
  return messagesTo(to).find((raw) => /^ {4}\d{8}\s*$/m.test(raw));
}

describe('the workspace pages in Chromium', () => {
  let page: Page;

  it('the claim page and its e-mail speak Spanish by default; the claim goes through', async () => {
    // exim delivers in a process of its own after it answered 250: wait for the message to land.
    const mail = await claimMailFor(owner.email);
    expect(mail).toMatch(/Subject: .*(Tu c=C3=B3digo|Tu código|=\?UTF-8\?)/i);
    page = await openPage();
    await page.goto(claimUrl);
    expect(await page.getAttribute('html', 'lang')).toBe('es-CO');
    await expect(h1(page)).resolves.toBe('Reclama Café del Quindío');
    await look(page, 'claim-es');
    await page.getByLabel(/Código del correo/).fill(await claimCodeFor(owner.email));
    await page.getByLabel('Tu nombre').fill('Camila Restrepo');
    await page.getByLabel('Elige una contraseña').fill(owner.password);
    // A password is hashed with scrypt: on a loaded machine the answer can take a while.
    await page.getByRole('button', { name: 'Reclamar el espacio de trabajo' }).click({ timeout: 180_000 });
    await expect(h1(page)).resolves.toBe('Café del Quindío es tuyo');
    await look(page, 'claim-done-es');
  }, 240_000);

  it('signs in and creates a key with a role and patterns: the secret is shown once, works, and is gone on reload', async () => {
    await page.goto(`${sys.gatewayUrl}/app/keys`);
    await page.getByLabel('Correo electrónico').fill(owner.email);
    await page.getByLabel('Contraseña').fill(owner.password);
    await page.getByRole('button', { name: 'Iniciar sesión' }).click({ timeout: 180_000 });
    await page.waitForURL('**/app/keys', { timeout: 180_000 });
    await expect(h1(page)).resolves.toBe('Claves de API de Café del Quindío');
    await expect(page.locator('nav a[aria-current=page]').textContent()).resolves.toBe('Claves de API');
    await page.getByLabel('Nombre').fill('Lector de facturas');
    await page.getByLabel('Rol').selectOption('accountant');
    await page.getByLabel('Herramientas permitidas (opcional)').fill('invoices.%:read parties.%:read');
    // The date written the Colombian way (day/month/year), its hint in words; the end of that day in Bogotá (UTC−5).
    const expiresField = page.getByLabel('Vence el (opcional)');
    expect(await expiresField.getAttribute('type')).toBe('text');
    await expect(page.locator('#key-expires-help').textContent()).resolves.toBe('Día/mes/año, p. ej. 22/11/2026');
    await expiresField.fill('31/12/2027');
    await page.getByRole('button', { name: 'Crear la clave' }).click();
    const secret = (await page.locator('#new-secret').textContent())!;
    expect(secret).toMatch(/^nk_/);
    const made = (await sys.invoke('api_keys.list', {}, ownerKey)).body.output.rows.find((k: any) => k.name === 'Lector de facturas');
    expect(made.expires_at).toBe('2028-01-01T04:59:59.000Z');
    await look(page, 'keys-created-es');
    // The key works within its patterns, and is refused outside them.
    expect((await sys.invoke('invoices.list', {}, secret)).status).toBe(200);
    expect((await sys.invoke('items.list', {}, secret)).status).toBe(403);
    // Listed, never shown again.
    await page.goto(`${sys.gatewayUrl}/app/keys`);
    expect(await page.content()).not.toContain(secret);
    const row = page.locator('#keys-table tr', { hasText: 'Lector de facturas' });
    await expect(row.textContent()).resolves.toContain('invoices.%:read');
    await row.getByRole('button', { name: 'Revocar la clave Lector de facturas' }).click();
    await expect(page.locator('#notice').textContent()).resolves.toContain('Revocaste la clave');
    expect((await sys.invoke('invoices.list', {}, secret)).status).toBe(401);
    await look(page, 'keys-es');
    // The ledger has both, as the person through the pages.
    const ledger = await sys.invoke('ledger.list', { tool: 'api_keys.create' }, ownerKey);
    expect(ledger.body.output.rows[0]).toMatchObject({ actor: { type: 'oauth_app', id: 'cuadra-web' }, outcome: 'ok' });
  }, 240_000);

  it('creates a policy from the template "hold every agent write over COP 5.000.000" and deletes it', async () => {
    await page.getByRole('link', { name: 'Políticas' }).click();
    await expect(h1(page)).resolves.toBe('Políticas de Café del Quindío');
    await page.getByLabel('Retener toda escritura de un agente por encima de un monto').check();
    await page.getByLabel('Monto (COP)').fill('5.000.000');
    await page.getByRole('button', { name: 'Crear la política' }).click();
    await expect(page.locator('#notice').textContent()).resolves.toBe('Creaste la política «Retener escrituras de agentes por encima de COP 5.000.000».');
    // COP 5.000.000 = 500.000.000 centavos.
    const made = (await sys.invoke('policies.list', {}, ownerKey)).body.output.rows.find((p: any) => p.name.includes('5.000.000'));
    expect(made).toMatchObject({ effect: 'hold', match: { actors: ['agent'], risk: ['write', 'external', 'destructive'] }, conditions: { amount_over: 500_000_000 } });
    const row = page.locator(`#${made.id}`);
    await expect(row.textContent()).resolves.toContain('Cuando mueve más de COP 5.000.000');
    await look(page, 'policies-es');
    await row.getByRole('button', { name: /Borrar la política/ }).click();
    await expect(page.locator('#notice').textContent()).resolves.toBe('Borraste la política.');
    expect((await sys.invoke('policies.list', {}, ownerKey)).body.output.rows.some((p: any) => p.id === made.id)).toBe(false);
  });

  it('members and roles: invites a person (the link shown once)', async () => {
    await page.getByRole('link', { name: 'Miembros y roles' }).click();
    await expect(page.locator('#members-table').textContent()).resolves.toContain('Camila Restrepo');
    await page.getByLabel('Correo electrónico').fill(andres);
    await page.getByLabel('Nombre', { exact: true }).fill('Andrés');
    await page.getByRole('button', { name: 'Invitar', exact: true }).click();
    await expect(page.locator('#notice code').textContent()).resolves.toMatch(/\/claim\?token=/);
    await expect(page.locator('#members-table').textContent()).resolves.toContain(andres);
    await look(page, 'members-es');
  });

  it('e-invoicing settings: saved through the tool; the secrets are never written back, and kept when left blank', async () => {
    await page.getByRole('link', { name: 'Facturación electrónica' }).click();
    await look(page, 'einvoicing-empty-es');
    await page.getByLabel('NIT con dígito de verificación').fill('900123456-8');
    await page.locator('#invoice-resolution').fill('18760000001');
    await page.locator('#invoice-valid').fill('30/06/2027');
    await page.getByLabel('Clave técnica').fill('fc8eac422eba16e22ffd8c6f94b3f40a6e38162c');
    await page.getByLabel('PIN del software').fill('12345');
    // The issuer's fiscal details DIAN requires on every invoice (Anexo Técnico 1.9): Armenia, Quindío is DANE 63001.
    await page.getByLabel('Dirección fiscal').fill('Calle 21 # 14-17');
    await page.getByLabel('Código DANE del municipio').fill('63001');
    await page.getByLabel('Responsabilidades fiscales').fill('O-15');
    await page.getByRole('button', { name: 'Guardar' }).click();
    await expect(page.locator('#notice').textContent()).resolves.toBe('Guardaste la configuración de facturación electrónica.');
    const html = await page.content();
    expect(html).not.toContain('fc8eac422eba16e22ffd8c6f94b3f40a6e38162c');
    expect(html).toContain('Guardada (nunca se muestra)');
    // Saved again with the secrets left blank: the stored ones stay.
    // The stored date (2027-06-30) comes back the Colombian way.
    expect(await page.locator('#invoice-valid').inputValue()).toBe('30/06/2027');
    await page.locator('#invoice-to').fill('9000');
    await page.getByRole('button', { name: 'Guardar' }).click();
    const read = (await sys.invoke('einvoicing.settings', {}, ownerKey)).body.output;
    expect(read).toMatchObject({ secrets: { technical_key: true, software_pin: true }, settings: { issuer: { nit: '900123456', check_digit: 8 }, numbering: { invoice: { prefix: 'FE', from: 1, to: 9000, resolution: '18760000001', valid_to: '2027-06-30' } } } });
    expect(read.settings.issuer).toMatchObject({ responsibilities: ['O-15'], address: { line: 'Calle 21 # 14-17', municipality_code: '63001', country: 'CO' } });
    expect(JSON.stringify(read)).not.toContain('12345"');
    await look(page, 'einvoicing-es');
  });

  it('the ledger: who did what, and the chain verified', async () => {
    await page.getByRole('link', { name: 'Registro' }).click();
    await expect(page.locator('#chain').textContent()).resolves.toContain('Íntegra');
    const text = await page.locator('#ledger-table').textContent();
    expect(text).toContain('einvoicing.configure');
    expect(text).toContain('las páginas de Cuadra');
    await look(page, 'ledger-es');
    await page.getByLabel('Filtrar por herramienta').fill('api_keys.revoke');
    await page.getByRole('button', { name: 'Filtrar' }).click();
    expect(await page.locator('#ledger-table tbody tr').count()).toBe(1);
  });

  it('a held update e-mails the owner a link (in Spanish) and shows before → after in the inbox', async () => {
    const party = (await sys.invoke('parties.create', { name: 'Tostadora La Loma', kind: 'vendor', email: 'compras@laloma.example' }, ownerKey)).body.output.party;
    const held = await sys.invoke('parties.update', { id: party.id, name: 'Tostadora La Loma SAS', email: 'pagos@laloma.example' }, agentKey);
    expect(held.status).toBe(202);
    const id = held.body.approval_id;
    // The owner's e-mail: who asked, what, and the link to this very request in the inbox.
    const text = await mailWith(id);
    expect(text).toContain(`/app/approvals?ws=${workspaceId}#${id}`);
    expect(text).toContain('Herramienta: parties.update');
    expect(text).toContain('El agente Asistente contable');
    expect(text).toContain('Cambiar los datos de Tostadora La Loma');
    await page.goto(`${sys.gatewayUrl}/app/approvals#${id}`);
    const change = page.locator(`#${id} table.change`);
    await expect(change.locator('caption').textContent()).resolves.toBe('Lo que cambiaría');
    const rows = await change.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent)));
    expect(rows).toEqual([['name', 'Tostadora La Loma', 'Tostadora La Loma SAS'], ['email', 'compras@laloma.example', 'pagos@laloma.example']]);
    await look(page, 'inbox-before-after-es');
  });

  it('a viewer\'s first visit, whose saves are refused, gives the mark back: nothing is made, and the owner\'s later visit makes the homes', async () => {
    // Saves that went through (the ledger also keeps refused ones: a viewer's first visit is refused).
    const saves = async () => (await sys.invoke('ledger.list', { tool: 'dashboards.save', limit: 100 }, ownerKey)).body.output.rows.filter((r: any) => r.outcome === 'ok').length;
    const viewer = { email: uniqueAddress('lucia@cafe-quindio.example'), password: 'solo miro los tableros' };
    const invited = await sys.invoke('members.invite', { email: viewer.email, role: 'viewer' }, ownerKey);
    expect(invited.status, JSON.stringify(invited.body)).toBe(200);
    // Another browser context: the viewer's cookies, not the owner's.
    const viewerContext = await openBrowserContext();
    try {
      const other = await viewerContext.newPage();
      await other.goto(invited.body.output.invite_url);
      await other.getByLabel('Tu nombre').fill('Lucía');
      await other.getByLabel(/contraseña/i).fill(viewer.password);
      await other.getByRole('button', { name: 'Unirme al espacio de trabajo' }).click({ timeout: 180_000 });
      await expect(h1(other)).resolves.toBe('Bienvenido a Café del Quindío');
      await other.goto(`${sys.gatewayUrl}/app/sign-in?next=%2Fdashboards`);
      await other.getByLabel('Correo electrónico').fill(viewer.email);
      await other.getByLabel('Contraseña').fill(viewer.password);
      await other.getByRole('button', { name: 'Iniciar sesión' }).click({ timeout: 180_000 });
      await other.waitForURL('**/dashboards', { timeout: 180_000 });
      // The viewer's first visit: dashboards.save tried as the viewer and refused for the role, so nothing is made …
      const tried = (await sys.invoke('ledger.list', { tool: 'dashboards.save', limit: 100 }, ownerKey)).body.output.rows;
      expect(tried.length).toBeGreaterThan(0);
      expect(tried.every((r: any) => r.outcome === 'policy_denied')).toBe(true);
      expect(await saves()).toBe(0);
      await expect(other.getByRole('button', { name: 'Crear los tableros de inicio' }).count()).resolves.toBe(1);
      // … and the once-per-workspace mark was given back (the owner's visit, next test, makes the five).
      const redis = new Redis(process.env.REDIS_URL!);
      try {
        expect(await redis.exists(`cuadra:homes-made:${workspaceId}`)).toBe(0);
      } finally {
        redis.disconnect();
      }
    } finally {
      await viewerContext.close();
    }
  }, 240_000);

  it('makes the module home dashboards through dashboards.save on the first visit, once; each renders in Spanish without a block error', async () => {
    // Saves that went through (the ledger also keeps refused ones: a viewer's first visit is refused).
    const saves = async () => (await sys.invoke('ledger.list', { tool: 'dashboards.save', limit: 100 }, ownerKey)).body.output.rows.filter((r: any) => r.outcome === 'ok').length;
    expect(await saves()).toBe(0);
    await page.goto(`${sys.gatewayUrl}/dashboards`);
    await expect(page.getByRole('button', { name: 'Crear los tableros de inicio' }).count()).resolves.toBe(0);
    expect(await saves()).toBe(5);
    // A second visit creates nothing.
    await page.goto(`${sys.gatewayUrl}/dashboards`);
    expect(await saves()).toBe(5);
    const titles = await page.locator('ul.tiles a').allTextContents();
    expect(titles).toEqual(expect.arrayContaining(['Inicio · Ventas', 'Inicio · Compras', 'Inicio · Finanzas', 'Inicio · Nómina', 'Inicio · Proyectos']));
    await look(page, 'dashboards-homes-es');
    const list = (await sys.invoke('dashboards.list', {}, ownerKey)).body.output.rows.filter((d: any) => /^Inicio · /.test(d.title));
    expect(list).toHaveLength(5);
    for (const d of list) {
      const rendered = await sys.invoke('dashboards.render', { id: d.id }, ownerKey);
      expect(rendered.status).toBe(200);
      const errors: string[] = [];
      const walk = (blocks: any[]) => { for (const b of blocks) { if (b.error) errors.push(`${d.title} ${b.type} ${b.title ?? ''}: ${b.error.code} ${b.error.error}`); if (b.children) walk(b.children); } };
      walk(rendered.body.output.blocks);
      expect(errors).toEqual([]);
    }
    await page.getByRole('link', { name: 'Inicio · Ventas' }).click();
    await page.waitForSelector('body[data-ready="true"]');
    expect(await page.getAttribute('#canvas', 'lang')).toBeNull();
    // The blocks' own words are Spanish: an empty table, its column names, the agenda's empty window.
    const canvasText = await page.locator('#canvas').innerText();
    expect(canvasText).not.toMatch(/Nothing to show yet|Nothing due|Bucket|Value\b/);
    expect(canvasText).toMatch(/Aún no hay nada que mostrar\.|Nada vence en este periodo\.|Tramo|Valor/);
    await look(page, 'dashboard-home-sales-es');
  });

  it('switches to English on every page, remembered; money and dates per locale', async () => {
    await page.goto(`${sys.gatewayUrl}/app/policies`);
    await page.getByRole('link', { name: 'English' }).click();
    await expect(h1(page)).resolves.toBe('Policies of Café del Quindío');
    await page.getByLabel('Hold every agent write over an amount').check();
    expect(await page.getByLabel('Amount (COP)').inputValue()).toBe('5,000,000');
    await page.getByRole('button', { name: 'Create the policy' }).click();
    await expect(page.locator('#notice').textContent()).resolves.toBe('You created the policy “Hold agent writes over COP 5,000,000”.');
    await look(page, 'policies-en');
    for (const [link, heading, shot] of [['API keys', 'API keys of Café del Quindío', 'keys-en'], ['Members and roles', 'Members and roles of Café del Quindío', 'members-en'], ['E-invoicing', 'E-invoicing of Café del Quindío', 'einvoicing-en'], ['Ledger', 'Action ledger of Café del Quindío', 'ledger-en']] as const) {
      await page.getByRole('link', { name: link, exact: true }).click();
      await expect(h1(page)).resolves.toBe(heading);
      expect(await page.getAttribute('html', 'lang')).toBe('en');
      await look(page, shot);
    }
    // Remembered on the account too: the next held call's e-mail comes in English.
    const held = await sys.invoke('parties.create', { name: 'Finca El Roble', kind: 'vendor' }, agentKey);
    expect(held.status).toBe(202);
    const mail = await mailWith(held.body.approval_id);
    expect(mail).toContain('Tool: parties.create');
    expect(mail).toContain('Review it and decide here');
    const at = await page.locator('#ledger-table time').first().getAttribute('datetime');
    const [y, m, d] = new Date(at!).toLocaleDateString('en-CA', { timeZone: 'America/Bogota' }).split('-');
    await expect(page.locator('#ledger-table time').first().textContent()).resolves.toContain(`${m}/${d}/${y}`);
    await page.goto(`${sys.gatewayUrl}/app/ledger?lang=es`);
    await expect(page.locator('#ledger-table time').first().textContent()).resolves.toContain(`${d}/${m}/${y}`);
  });

  it('is sealed: another workspace named in ?ws= is not shown; a form without its token is refused', async () => {
    const other = await sys.workspace('Otra Empresa SAS');
    await sys.invoke('api_keys.create', { name: 'Clave ajena', role: 'viewer' }, other.api_key);
    await page.goto(`${sys.gatewayUrl}/app/keys?ws=${other.workspace_id}&lang=es`);
    await expect(h1(page)).resolves.toBe('Claves de API de Café del Quindío');
    expect(await page.content()).not.toContain('Clave ajena');
    const res = await page.request.post(`${sys.gatewayUrl}/app/keys`, { form: { name: 'x', role: 'viewer', ws: workspaceId } });
    expect(res.status()).toBe(403);
    const keys = (await sys.invoke('api_keys.list', {}, ownerKey)).body.output.rows;
    expect(keys.some((k: any) => k.name === 'x')).toBe(false);
    expect(consoleProblems).toEqual([]);
    void agentKey;
  });
  it('the OAuth sign-in and consent screens speak Spanish too, and pass axe', async () => {
    const oauth = await import('oauth4webapi');
    const insecure = { [oauth.allowInsecureRequests]: true };
    const issuer = new URL(sys.gatewayUrl);
    const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }));
    const client = await oauth.processDynamicClientRegistrationResponse(await oauth.dynamicClientRegistrationRequest(as, { client_name: 'Conciliador Plus', redirect_uris: ['http://127.0.0.1:53682/cb'], token_endpoint_auth_method: 'none' }, insecure));
    const url = new URL(as.authorization_endpoint!);
    for (const [k, v] of Object.entries({ response_type: 'code', client_id: client.client_id, redirect_uri: 'http://127.0.0.1:53682/cb', scope: 'tools:read tools', code_challenge: await oauth.calculatePKCECodeChallenge(oauth.generateRandomCodeVerifier()), code_challenge_method: 'S256', lang: 'es' })) url.searchParams.set(k, v);
    await page.goto(url.href);
    await expect(h1(page)).resolves.toBe('Inicia sesión para continuar en Conciliador Plus');
    await look(page, 'oauth-login-es');
    await page.getByLabel('Correo electrónico').fill(owner.email);
    await page.getByLabel('Contraseña').fill(owner.password);
    await page.getByRole('button', { name: 'Iniciar sesión' }).click();
    await expect(h1(page)).resolves.toBe('¿Permitir que Conciliador Plus use tu espacio de trabajo?');
    const text = await page.getByRole('main').textContent();
    expect(text).toContain('tools: Leer y cambiar los datos de tu espacio de trabajo');
    expect(text).toContain('tu rol: owner');
    await look(page, 'oauth-consent-es');
  }, 120_000);
});
