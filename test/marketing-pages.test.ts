// The marketing pages a person works with (/app/marketing), in Debian's Chromium: an e-mail account
// connected and tested, a template edited and previewed for a real party, a campaign composed, its
// audience counted by the send's dry run, scheduled (a Sunday moves to Monday 7:00), sent — held,
// shown as waiting approval — and, once a second person approves, its recipients; a site published.
// Every action is a tool call through the pipeline (checked here in the workspace and the ledger);
// axe finds no serious or critical problem; the screenshots are kept.
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Connection } from 'mongoose';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeProblems, openBrowser, pageWatching, SHOTS as shots } from './helpers/browser.ts';
import { uniqueAddress } from './helpers/mail.ts';
import { peopleOf } from './helpers/oauth.ts';
import { startTestSystem, type TestSystem } from './helpers/system.ts';

const person = { email: uniqueAddress('lucia@mercadeo.example'), password: 'correos con permiso siempre' };
const run = randomBytes(3).toString('hex');

let sys: TestSystem;
let db: Connection;
let context: BrowserContext;
let closeBrowser: (() => Promise<void>) | undefined;
let key: string;
let approverKey: string;
let workspaceId: string;
const parties: Record<string, string> = {};
let siteId: string;
const consoleProblems: string[] = [];

const ok = (tool: string, input: unknown, k = key) => sys.output(tool, input, k);

beforeAll(async () => {
  sys = await startTestSystem('mktpages');
  const people = await peopleOf(sys);
  db = people.db;
  const ws = await sys.workspace('Café de Origen SAS');
  ({ api_key: key, workspace_id: workspaceId } = ws);
  approverKey = (await sys.person(workspaceId, 'admin', 'Aprobadora')).api_key;
  const user = await people.people.createUser({ email: person.email, name: 'Lucía', password: person.password });
  await people.people.setMembership(workspaceId, user._id, 'admin');
  for (const [name, consent] of [['Marta Gómez', true], ['Jorge Ruiz', false]] as const) {
    parties[name] = (await ok('parties.create', { name, kind: 'customer', email: uniqueAddress(`${name.split(' ')[0].toLowerCase()}@clientes.example`), tags: ['boletin'] })).party.id;
    if (consent) await ok('consents.grant', { party_id: parties[name], channel: 'email', evidence: { source: 'form', text: 'Acepto recibir correos comerciales de Café de Origen.', reference: 'feria' } });
  }
  siteId = (await ok('sites.create', { slug: `cafe-${run}`, name: 'Café de Origen', pages: [{ path: '/', title: 'Inicio', blocks: [{ type: 'heading', text: 'Café de Huila' }] }, { path: '/tienda', title: 'Tienda', blocks: [{ type: 'text', text: 'Pronto' }] }] })).site.id;
  ({ context, close: closeBrowser } = await openBrowser());
});
afterAll(async () => {
  await closeBrowser?.();
  await db?.close();
  await sys?.stop();
});

/** The workspace's ledger entries for `tool` (who called it, with what outcome). */
async function ledgerOf(tool: string): Promise<{ outcome: string; actor: { type: string } }[]> {
  const rows = (await ok('ledger.list', { limit: 100 })).rows as { tool: string; outcome: string; actor: { type: string } }[];
  return rows.filter((r) => r.tool === tool);
}

describe('the marketing pages in Chromium', () => {
  let page: Page;

  it('connects an e-mail account and tests it against the system SMTP server', async () => {
    page = await pageWatching(context, consoleProblems);
    await page.goto(`${sys.gatewayUrl}/app/marketing`);
    await page.getByLabel('Correo electrónico').fill(person.email);
    await page.getByLabel('Contraseña').fill(person.password);
    await page.getByRole('button', { name: 'Iniciar sesión' }).click();
    await page.waitForURL('**/app/marketing');
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Marketing de Café de Origen SAS');
    expect(await page.locator('#mkt-accounts ~ p.note').first().textContent()).toContain('Aún no hay cuentas de correo');
    await page.getByLabel('Nombre', { exact: true }).first().fill('Boletín');
    await page.getByLabel('Correo del remitente').fill('boletin@cafe.example');
    await page.getByLabel('Nombre del remitente').fill('Café de Origen');
    await page.getByRole('button', { name: 'Conectar', exact: true }).click();
    await expect.poll(() => page.locator('#notice').textContent()).toContain('Se conectó la cuenta Boletín');
    const row = page.locator('#accounts-table tbody tr');
    expect(await row.locator('td').nth(1).textContent()).toBe('El servidor de Cuadra');
    expect(await row.locator('td').nth(2).textContent()).toMatch(/^\d+ por minuto$/);
    expect(await row.locator('.badge').textContent()).toBe('Sin probar');
    await page.getByRole('button', { name: 'Probar la cuenta Boletín' }).click();
    await expect.poll(() => page.locator('#notice').textContent()).toBe('La cuenta Boletín funciona.');
    expect(await page.locator('#accounts-table .badge').textContent()).toBe('Funciona');
    // Through the tools, as the person: the stored account says so, and the ledger has both calls.
    const [account] = (await ok('email_accounts.list', {})).rows;
    expect({ name: account.name, status: account.status, transport: account.transport }).toEqual({ name: 'Boletín', status: 'verified', transport: 'system' });
    expect((await ledgerOf('email_accounts.connect')).map((e) => [e.outcome, e.actor.type])).toEqual([['ok', 'oauth_app']]);
    expect((await ledgerOf('email_accounts.verify')).map((e) => [e.outcome, e.actor.type])).toEqual([['ok', 'oauth_app']]);
    // A hostile or wrong input is refused by the tool, at its field, and nothing is kept.
    await page.getByLabel('Nombre', { exact: true }).first().fill('Otra');
    await page.getByLabel('Correo del remitente').fill('otra@cafe.example');
    await page.getByLabel('Servidor', { exact: true }).fill('smtp bad host');
    await page.getByLabel('Puerto', { exact: true }).fill('587');
    await page.getByLabel('Usuario').fill('u');
    await page.getByLabel('Contraseña', { exact: true }).fill('secreto-de-prueba');
    await page.getByRole('button', { name: 'Conectar', exact: true }).click();
    await expect.poll(() => page.locator('#notice').textContent()).toContain('/smtp/host');
    expect(await page.content()).not.toContain('secreto-de-prueba');
    expect((await ok('email_accounts.list', {})).rows).toHaveLength(1);
    // The refusal is the page's answer, with its status (the browser logs the 400 and nothing else).
    expect(consoleProblems.splice(0)).toEqual([expect.stringContaining('status of 400')]);
    expect(await axeProblems(page)).toEqual([]);
    await page.screenshot({ path: path.join(shots, 'marketing-accounts-es.png'), fullPage: true });
  });

  it('creates a template, edits it and previews it for a real party in a sandboxed frame', async () => {
    await page.getByLabel('Nombre', { exact: true }).nth(1).fill('Cosecha de diciembre');
    await page.getByRole('button', { name: 'Crear plantilla' }).click();
    await page.getByRole('link', { name: 'Editar Cosecha de diciembre' }).click();
    await page.waitForURL('**/app/marketing/templates/**');
    await page.getByLabel('Asunto').fill('Hola {{ party.first_name }}, llegó la cosecha');
    const mjml = await page.getByLabel('Cuerpo (MJML)').inputValue();
    expect(mjml).toContain('{{ unsubscribe_url }}');
    await page.getByLabel('Cuerpo (MJML)').fill(mjml.replace(/<mj-text([^>]*)>/, '<mj-text$1>Café de Huila, tostado esta semana. '));
    await page.getByRole('button', { name: 'Guardar' }).click();
    await expect.poll(() => page.locator('#notice').textContent()).toBe('Se guardó la plantilla (versión 2).');
    await page.getByLabel('Con los datos de').selectOption(parties['Marta Gómez']);
    await page.getByRole('button', { name: 'Ver vista previa' }).click();
    await expect.poll(() => page.locator('#preview-subject').textContent()).toBe('Hola Marta, llegó la cosecha');
    const frame = page.frameLocator('iframe.preview');
    await expect.poll(() => frame.locator('body').textContent()).toContain('Café de Huila, tostado esta semana.');
    // The preview frame runs nothing: its own CSP sandboxes it.
    const preview = await fetch(`${sys.gatewayUrl}${await page.locator('iframe.preview').getAttribute('src')}`, { headers: { cookie: (await context.cookies()).map((c) => `${c.name}=${c.value}`).join('; ') } });
    expect(preview.headers.get('content-security-policy')).toMatch(/^sandbox; default-src 'none'/);
    expect(await page.locator('#preview-text').textContent()).toContain('Marta');
    expect(await axeProblems(page)).toEqual([]);
    await page.locator('iframe.preview').scrollIntoViewIfNeeded();
    await page.locator('#preview').screenshot({ path: path.join(shots, 'marketing-template-preview-es.png') });
    await page.screenshot({ path: path.join(shots, 'marketing-template-es.png'), fullPage: true });
  });

  it('composes a campaign, counts its audience, moves a Sunday to Monday 7:00, and a send waits for approval', async () => {
    await page.getByRole('link', { name: '← Volver a marketing' }).click();
    await page.getByLabel('Nombre', { exact: true }).nth(2).fill('Cosecha 2026');
    await page.getByLabel('Tipo de tercero').selectOption('customer');
    await page.getByLabel('Etiquetas (todas)').fill('boletin');
    await page.getByRole('button', { name: 'Crear campaña' }).click();
    await page.locator('#notice a').click();
    await page.waitForURL('**/app/marketing/campaigns/**');
    // The send's dry run: Marta consented, Jorge did not.
    expect(await page.locator('#audience-count').textContent()).toBe('Le llegará a 1 persona con consentimiento.');
    expect(await page.locator('#excluded').textContent()).toBe('Sin consentimiento: 1');
    // Sunday 6 December 2026, 10:00 → Monday 7 December, 7:00 (Ley 2300 de 2023).
    await page.getByLabel('Día').fill('06/12/2026');
    await page.getByLabel('Hora (HH:MM)').fill('10:00');
    await page.getByRole('button', { name: 'Programar', exact: true }).click();
    await expect.poll(() => page.locator('#notice').textContent()).toMatch(/^Programada para el 07\/12\/2026,? 07:00(\s?a\.\s?m\.)?: .*domingo/);
    const campaignId = /\/campaigns\/([A-Za-z0-9_-]+)/.exec(page.url())![1];
    expect((await ok('email_campaigns.list', {})).rows.find((c: { id: string }) => c.id === campaignId).send_at).toBe('2026-12-07T12:00:00.000Z');
    await page.getByRole('button', { name: 'Enviar campaña' }).click();
    await expect.poll(() => page.locator('#notice').textContent()).toContain('El envío quedó esperando aprobación.');
    expect(await page.locator('#waiting').textContent()).toBe('Esperando aprobación');
    expect(await page.getByRole('button', { name: 'Enviar campaña' }).count()).toBe(0);
    expect(await axeProblems(page)).toEqual([]);
    await page.screenshot({ path: path.join(shots, 'marketing-campaign-held-es.png'), fullPage: true });
    // A second person approves (reading the same dry run); the page then lists the recipient.
    const pending = (await ok('approvals.list', { status: 'pending' }, approverKey)).rows.filter((a: { tool: string }) => a.tool === 'email_campaigns.send');
    expect(pending).toHaveLength(1);
    expect((await ok('approvals.get', { id: pending[0].id }, approverKey)).approval.preview.recipients).toBe(1);
    await ok('approvals.decide', { id: pending[0].id, decision: 'approve' }, approverKey);
    // The approved send runs in the background (the approvals sweep): the page lists its recipient once it has.
    await expect.poll(async () => {
      await page.goto(`${sys.gatewayUrl}/app/marketing/campaigns/${campaignId}?ws=${workspaceId}`);
      return page.locator('#rows-table tbody tr th').allTextContents();
    }, { timeout: 20_000 }).toEqual(['Marta Gómez']);
    expect(await page.locator('#waiting').count()).toBe(0);
    expect(await page.locator('#rows-table tbody tr td').nth(1).textContent()).toMatch(/^(En cola|Enviándose|Enviados|Entregados)/);
    expect(await page.locator('#campaign-status .badge').first().textContent()).toMatch(/^(Programada|Enviándose|Enviada)$/);
  });

  it('publishes a site and lists its pages', async () => {
    await page.goto(`${sys.gatewayUrl}/app/marketing`);
    const row = page.locator(`#sites-table tr[id="${siteId}"]`);
    expect(await row.locator('li').allTextContents()).toEqual(['/ Inicio', '/tienda Tienda']);
    expect(await row.locator('.badge').textContent()).toBe('Sin publicar');
    await page.getByRole('button', { name: 'Publicar el sitio Café de Origen' }).click();
    await expect.poll(() => page.locator('#notice').textContent()).toBe('Se publicó Café de Origen (versión 1).');
    expect(await page.locator(`#sites-table tr[id="${siteId}"] .badge`).textContent()).toBe('Publicada la versión 1 de 1');
    expect((await fetch(`${sys.gatewayUrl}/s/cafe-${run}/`)).status).toBe(200);
    expect(await axeProblems(page)).toEqual([]);
    await page.screenshot({ path: path.join(shots, 'marketing-overview-es.png'), fullPage: true });
  });

  it('edits the site\'s pages one at a time through sites.pages.* (add, change, move up), refusing a stale form', async () => {
    await page.getByRole('link', { name: 'Editar páginas · Café de Origen' }).click();
    await page.waitForURL(`**/app/marketing/sites/${siteId}?**`);
    expect(await page.locator('#site-pages-h').textContent()).toBe('Páginas de Café de Origen');
    await page.getByLabel('Ruta', { exact: true }).last().fill('/contacto');
    await page.getByLabel('Título', { exact: true }).last().fill('Contacto');
    await page.getByRole('button', { name: 'Añadir la página' }).click();
    await expect.poll(() => page.locator('#notice').textContent()).toBe('Se añadió la página /contacto (revisión 1).');
    await page.goto(`${sys.gatewayUrl}/app/marketing/sites/${siteId}?ws=${workspaceId}`);
    await page.locator('#pg2-blocks').fill(JSON.stringify([{ type: 'heading', text: 'Escríbenos' }, { type: 'text', text: 'Calle 5 # 10-20, Neiva' }]));
    await page.getByRole('button', { name: 'Guardar la página /contacto' }).click();
    await expect.poll(() => page.locator('#notice').textContent()).toBe('Se guardó la página /contacto (revisión 2).');
    await page.goto(`${sys.gatewayUrl}/app/marketing/sites/${siteId}?ws=${workspaceId}`);
    await page.getByRole('button', { name: 'Subir la página /contacto' }).click();
    await expect.poll(() => page.locator('#notice').textContent()).toBe('Se cambió el orden de las páginas (revisión 3).');
    await page.goto(`${sys.gatewayUrl}/app/marketing/sites/${siteId}?ws=${workspaceId}`);
    expect(await page.locator('#site-pages h3').allTextContents()).toEqual(['/ Inicio', '/contacto Contacto', '/tienda Tienda']);
    // The tools say the same, and the ledger holds each change as the person's app.
    const listed = await ok('sites.pages.list', { site_id: siteId });
    expect({ revision: listed.revision, contacto: listed.rows[1] }).toEqual({ revision: 3, contacto: { path: '/contacto', title: 'Contacto', position: 2, blocks: [{ type: 'heading', text: 'Escríbenos' }, { type: 'text', text: 'Calle 5 # 10-20, Neiva' }] } });
    expect((await ledgerOf('sites.pages.update')).map((e) => [e.outcome, e.actor.type])).toEqual([['ok', 'oauth_app']]);
    // A form read before someone else's change is refused (409), not written over it.
    await ok('sites.pages.update', { site_id: siteId, path: '/tienda', title: 'Tienda en línea' });
    await page.getByRole('button', { name: 'Guardar la página /contacto' }).click();
    await expect.poll(() => page.locator('#notice').textContent()).toContain('revision 4');
    expect((await ok('sites.pages.list', { site_id: siteId })).revision).toBe(4);
    expect(consoleProblems.splice(0)).toEqual([expect.stringContaining('status of 409')]);
    expect(await axeProblems(page)).toEqual([]);
    await page.screenshot({ path: path.join(shots, 'marketing-site-pages-es.png'), fullPage: true });
  });

  it('speaks English on request, with no axe problem and no console error', async () => {
    await page.goto(`${sys.gatewayUrl}/app/marketing?lang=en`);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Marketing of Café de Origen SAS');
    expect(await page.locator('#accounts-table .badge').textContent()).toBe('Works');
    expect(await axeProblems(page)).toEqual([]);
    await page.screenshot({ path: path.join(shots, 'marketing-overview-en.png'), fullPage: true });
    await page.goto(`${sys.gatewayUrl}/app/marketing?lang=es`);
    expect(consoleProblems, consoleProblems.join('\n')).toEqual([]);
  });
});
