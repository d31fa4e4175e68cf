import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type { BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeProblems, openBrowser, SHOTS } from './helpers/browser.ts';
import { startTestSystem, type TestSystem } from './helpers/system.ts';

/*
 * Hosted sites (issue 36): pages of blocks served by the marketing service at the gateway's
 * /s/<slug>/ with a strict CSP, hostile content refused or escaped (checked in Debian's Chromium:
 * nothing runs), published versions kept and rolled back, a lead form keeping the visitor's consent.
 */

let sys: TestSystem;
let key: string;
let workspaceId: string;
let context: BrowserContext;
let closeBrowser: (() => Promise<void>) | undefined;

/** A tool's output, as the workspace's key unless another is given (sys.output throws on any other status). */
function ok(tool: string, input: unknown, k = key) {
  return sys.output(tool, input, k);
}

// Site addresses are unique in the deployment, which other test files may share.
const run = randomBytes(3).toString('hex');

const HOSTILE = '<script>window.__pwned = 1; alert(1)</script><img src=x onerror="window.__pwned = 2">';

beforeAll(async () => {
  sys = await startTestSystem('sites');
  ({ api_key: key, workspace_id: workspaceId } = await sys.workspace('Diseños Andinos SAS'));
  ({ context, close: closeBrowser } = await openBrowser({ width: 900, height: 900 }));
});

afterAll(async () => {
  await closeBrowser?.();
  await sys?.stop();
});

describe('hosted sites', () => {
  it('a booking block links to the workspace\'s public booking page for that booking type; a hostile slug is refused at its field', async () => {
    const refused = await sys.invoke('sites.create', { slug: `reservas-mal-${run}`, name: 'X', pages: [{ path: '/', title: 'Inicio', blocks: [{ type: 'booking', booking_type: 'x"><script>alert(1)</script>' }] }] }, key);
    expect({ status: refused.status, code: refused.body.code, field: refused.body.field }).toEqual({ status: 422, code: 'invalid_input', field: '/pages/0/blocks/0/booking_type' });
    const noType = await sys.invoke('sites.create', { slug: `reservas-mal-${run}`, name: 'X', pages: [{ path: '/', title: 'Inicio', blocks: [{ type: 'booking', url: 'https://x.example' }] }] }, key);
    expect(noType.status).toBe(422);
    const site = (await ok('sites.create', { slug: `reservas-${run}`, name: 'Consultorio', pages: [{ path: '/', title: 'Inicio', blocks: [{ type: 'booking', booking_type: 'consulta-inicial', text: 'Treinta minutos con la doctora.' }] }] })).site;
    await ok('sites.publish', { id: site.id });
    const html = await (await fetch(`${sys.gatewayUrl}/s/reservas-${run}/`)).text();
    expect(html).toContain(`<h2 id="b0-title">Reserva una cita</h2><p>Treinta minutos con la doctora.</p><p><a href="/book/${workspaceId}/consulta-inicial">Ver horarios y reservar</a></p>`);
    // The link reaches the booking page: the gateway sends it on to the workspace's slug address.
    await ok('booking_types.create', { slug: 'consulta-inicial', name: 'Consulta inicial', duration_min: 30, weekly: { mon: [{ start: '09:00', end: '12:00' }] } });
    const link = await fetch(`${sys.gatewayUrl}/book/${workspaceId}/consulta-inicial?desde=sitio`, { redirect: 'manual' });
    const slug = await sys.identity.slugOf(workspaceId);
    expect({ status: link.status, location: link.headers.get('location') }).toEqual({ status: 308, location: `/book/${slug}/consulta-inicial?desde=sitio` });
    const page = await fetch(`${sys.gatewayUrl}/book/${workspaceId}/consulta-inicial`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('Consulta inicial');
    // An id that is no workspace's, and a booking posted to the id address, find nothing.
    expect((await fetch(`${sys.gatewayUrl}/book/ws_AAAAAAAAAAAAAAAA/consulta-inicial`, { redirect: 'manual' })).status).toBe(404);
    expect((await fetch(`${sys.gatewayUrl}/book/${workspaceId}/consulta-inicial`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'name=x' })).status).toBe(404);
  });

  it('refuses hostile addresses and bad pages at their field, and keeps one site per address', async () => {
    const page = (blocks: unknown[]) => ({ slug: `refusals-${run}`, name: 'X', pages: [{ path: '/', title: 'Inicio', blocks }] });
    const refused = async (input: unknown, field: string, tool = 'sites.create') => {
      const r = await sys.invoke(tool, input, key);
      expect({ field, status: r.status, code: r.body.code, at: r.body.field }).toEqual({ field, status: 422, code: 'invalid_input', at: field });
    };
    await refused(page([{ type: 'image', url: 'javascript:alert(1)', alt: 'x' }]), '/pages/0/blocks/0/url');
    await refused(page([{ type: 'image', url: 'data:text/html,<script>alert(1)</script>', alt: 'x' }]), '/pages/0/blocks/0/url');
    await refused(page([{ type: 'image', url: 'https://ok.example/a.png" onerror="alert(1)', alt: 'x' }]), '/pages/0/blocks/0/url');
    await refused(page([{ type: 'image', url: 'https://ok.example/a.png' }]), '/pages/0/blocks/0/alt');
    await refused(page([{ type: 'heading', text: 'x', onclick: 'alert(1)' }]), '/pages/0/blocks/0/onclick');
    await refused(page([{ type: 'script', text: 'alert(1)' }]), '/pages/0/blocks/0/type');
    await refused(page([{ type: 'form', fields: ['name'], consent_text: 'Autorizo el tratamiento de mis datos.' }]), '/pages/0/blocks/0/fields');
    await refused({ slug: 'Mayúsculas', name: 'X' }, '/slug');
    await refused({ slug: 'dos', name: 'X', pages: [{ path: '/', title: 'A', blocks: [] }, { path: '/', title: 'B', blocks: [] }] }, '/pages/1/path');
    await refused({ slug: 'ruta', name: 'X', pages: [{ path: '/../etc', title: 'A', blocks: [] }] }, '/pages/0/path');
    await ok('sites.create', { slug: `ocupado-${run}`, name: 'Primero' });
    const taken = await sys.invoke('sites.create', { slug: `ocupado-${run}`, name: 'Segundo' }, (await sys.workspace('Otra SAS')).api_key);
    expect(taken.status).toBe(409);
    expect(taken.body).toMatchObject({ code: 'conflict', error: expect.stringContaining(`/s/ocupado-${run}/ is taken`) });
    // A viewer reaches no sites.* write.
    const viewer = (await sys.key(workspaceId, 'viewer')).api_key;
    expect((await sys.invoke('sites.create', { slug: `del-lector-${run}`, name: 'X' }, viewer)).body.code).toBe('policy_denied');
  });

  it('serves the published version with a strict CSP; hostile text is shown as text and nothing runs in Chromium; axe finds nothing serious', async () => {
    const site = (await ok('sites.create', {
      slug: `disenos-andinos-${run}`, name: 'Diseños Andinos',
      pages: [
        {
          path: '/', title: `Inicio ${HOSTILE}`, blocks: [
            { type: 'heading', text: `Bienvenidos ${HOSTILE}`, level: 2 },
            { type: 'text', text: `Diseño gráfico en Medellín.\n\n<a href="javascript:alert(1)">Haz clic</a> ${HOSTILE}` },
            { type: 'image', url: 'https://img.example/logo.png', alt: `Logo" onload="window.__pwned=3` },
            { type: 'list', items: [{ title: 'Logos', text: '<b>desde</b> $500.000' }, { title: 'Sitios web' }] },
            { type: 'form', title: 'Pide una cotización', fields: ['name', 'email', 'phone', 'message'], consent_text: 'Autorizo a Diseños Andinos SAS a tratar mis datos y a escribirme (Ley 1581 de 2012).', submit_label: 'Enviar' },
          ],
        },
        { path: '/precios', title: 'Precios', blocks: [{ type: 'text', text: 'Versión 1' }] },
      ],
    })).site;
    expect(site.published_version).toBeNull();
    expect((await fetch(`${sys.gatewayUrl}/s/disenos-andinos-${run}/`)).status).toBe(404); // a draft is not served
    const v1 = (await ok('sites.publish', { id: site.id })).site;
    expect(v1).toMatchObject({ published_version: 1, versions: 1 });

    const res = await fetch(`${sys.gatewayUrl}/s/disenos-andinos-${run}/`);
    expect(res.status).toBe(200);
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).toMatch(/^default-src 'none'; style-src 'sha256-[A-Za-z0-9+/=]+'; img-src https:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'$/);
    const html = await res.text();
    expect(html).not.toMatch(/<script/i);
    expect(html).not.toMatch(/href="javascript:/i);

    const page = await context.newPage();
    const dialogs: string[] = [];
    const violations: string[] = [];
    page.on('dialog', (d) => { dialogs.push(d.message()); void d.dismiss(); });
    page.on('console', (m) => { if (/Content Security Policy/i.test(m.text())) violations.push(m.text()); });
    await page.route('https://img.example/**', (route) => route.fulfill({ status: 200, contentType: 'image/svg+xml', body: '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>' }));
    await page.goto(`${sys.gatewayUrl}/s/disenos-andinos-${run}/`);
    expect(await page.evaluate(() => (globalThis as any).__pwned)).toBeUndefined();
    // No element carries an event handler or a script: the hostile text stayed text.
    expect(await page.evaluate(() => [...(globalThis as any).document.querySelectorAll('*')].flatMap((e: any) => [...e.attributes].map((a: any) => a.name)).filter((n: string) => n.startsWith('on')))).toEqual([]);
    expect(await page.locator('script').count()).toBe(0);
    expect(dialogs).toEqual([]);
    expect(await page.locator('h1').innerText()).toBe(`Inicio ${HOSTILE}`);
    expect(await page.locator('h2').first().innerText()).toBe(`Bienvenidos ${HOSTILE}`);
    expect(await page.locator('main a').count()).toBe(0);
    expect(await page.locator('img').getAttribute('alt')).toBe('Logo" onload="window.__pwned=3');
    expect(await axeProblems(page)).toEqual([]);
    await page.screenshot({ path: path.join(SHOTS, 'site-home.png'), fullPage: true });

    // The lead form, filled and sent in the browser: kept with the consent given and its evidence.
    await page.getByLabel('Nombre').fill('Lucía Gómez');
    await page.getByLabel('Correo electrónico').fill('Lucia@Ejemplo.co');
    await page.getByLabel('Teléfono').fill('+57 300 123 4567');
    await page.getByLabel('Mensaje').fill('Necesito un logo <b>ya</b>');
    await page.getByLabel(/Autorizo a Diseños Andinos/).check();
    await Promise.all([page.waitForURL(`${sys.gatewayUrl}/s/disenos-andinos-${run}/`), page.getByRole('button', { name: 'Enviar' }).click()]);
    expect(await page.locator('h1').innerText()).toBe('Gracias');
    expect(violations).toEqual([]);
    await page.close();
    const leads = (await ok('sites.leads', { id: site.id })).rows;
    expect(leads).toHaveLength(1);
    expect(leads[0]).toMatchObject({ path: '/', name: 'Lucía Gómez', email: 'lucia@ejemplo.co', phone: '+57 300 123 4567', message: 'Necesito un logo <b>ya</b>', consent: { given: true, text: 'Autorizo a Diseños Andinos SAS a tratar mis datos y a escribirme (Ley 1581 de 2012).' } });
    expect(leads[0].consent.ip).toBeTruthy();
    expect(leads[0].consent.user_agent).toMatch(/Chrome/);
    // A bad e-mail keeps nothing.
    const bad = await fetch(`${sys.gatewayUrl}/s/disenos-andinos-${run}/`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'form=4&email=no-es-correo' });
    expect(bad.status).toBe(400);
    expect((await ok('sites.leads', { id: site.id })).rows).toHaveLength(1);
    // Another workspace does not see the site's leads.
    expect((await sys.invoke('sites.leads', { id: site.id }, (await sys.workspace('Ajena SAS')).api_key)).status).toBe(404);
  });

  it('a page added with sites.pages.create from hostile blocks runs nothing in Chromium (canary global, CSP violation listener)', async () => {
    const site = (await ok('sites.create', { slug: `trampa-${run}`, name: 'Trampa' })).site;
    for (const [field, block] of [['/blocks/0/url', { type: 'image', url: 'javascript:window.__pwned=1', alt: 'x' }], ['/blocks/0/style', { type: 'text', text: 'x', style: 'width:expression(alert(1))' }], ['/blocks/0/onload', { type: 'heading', text: 'x', onload: 'alert(1)' }]] as const) {
      const r = await sys.invoke('sites.pages.create', { site_id: site.id, path: '/mala', title: 'Mala', blocks: [block] }, key);
      expect({ status: r.status, code: r.body.code, field: r.body.field }).toEqual({ status: 422, code: 'invalid_input', field });
    }
    const css = '<style>body{background:url("javascript:window.__pwned=4");width:expression(window.__pwned=5)}</style>';
    await ok('sites.pages.create', { site_id: site.id, path: '/trampa', title: `Trampa ${HOSTILE}`, blocks: [
      { type: 'text', text: `${css}<a href="javascript:window.__pwned=6">clic</a> ${HOSTILE}` },
      { type: 'list', title: '<svg onload="window.__pwned=7">', items: [{ title: '<iframe src="javascript:window.__pwned=8"></iframe>' }] },
    ] });
    await ok('sites.publish', { id: site.id });
    const page = await context.newPage();
    // The listener is installed before any of the page runs; a blocked attempt would show in it.
    await page.addInitScript(() => {
      (globalThis as any).__violations = [];
      (globalThis as any).document.addEventListener('securitypolicyviolation', (e: any) => (globalThis as any).__violations.push(`${e.violatedDirective} ${e.blockedURI}`));
    });
    await page.goto(`${sys.gatewayUrl}/s/trampa-${run}/trampa`);
    expect(await page.evaluate(() => [(globalThis as any).__pwned, (globalThis as any).__violations])).toEqual([undefined, []]);
    expect(await page.locator('script, style:not(head style), iframe, svg, main a').count()).toBe(0);
    expect(await page.locator('main p').first().innerText()).toBe(`${css}<a href="javascript:window.__pwned=6">clic</a> ${HOSTILE}`);
    expect(await page.locator('main h2').innerText()).toBe('<svg onload="window.__pwned=7">');
    await page.close();
  });

  it('keeps every published version: a new one replaces what visitors see, a rollback brings an earlier one back', async () => {
    const site = (await ok('sites.create', { slug: `versiones-${run}`, name: 'Versiones', pages: [{ path: '/', title: 'Inicio', blocks: [{ type: 'text', text: 'Primera' }] }] })).site;
    await ok('sites.publish', { id: site.id });
    await ok('sites.update', { id: site.id, pages: [{ path: '/', title: 'Inicio', blocks: [{ type: 'text', text: 'Segunda' }] }] });
    const read = async () => (await (await fetch(`${sys.gatewayUrl}/s/versiones-${run}/`)).text());
    expect(await read()).toContain('Primera'); // the draft is not served until published
    expect((await ok('sites.publish', { id: site.id })).site).toMatchObject({ published_version: 2, versions: 2 });
    expect(await read()).toContain('Segunda');
    expect((await ok('sites.rollback', { id: site.id, version: 1 })).site).toMatchObject({ published_version: 1, versions: 2 });
    expect(await read()).toContain('Primera');
    const r = await sys.invoke('sites.rollback', { id: site.id, version: 3 }, key);
    expect(r.body).toMatchObject({ code: 'invalid_input', field: '/version' });
    expect((await fetch(`${sys.gatewayUrl}/s/versiones-${run}/nada`)).status).toBe(404);
    // Only GET and POST are served there.
    const put = await fetch(`${sys.gatewayUrl}/s/versiones-${run}/`, { method: 'PUT' });
    expect(put.status).toBe(405);
    expect(put.headers.get('allow')).toBe('GET, HEAD, POST');
  });
});
