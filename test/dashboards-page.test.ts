import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Connection } from 'mongoose';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../scripts/infra.ts';
import { mixedDashboard, seedReceivables } from './helpers/canvas.ts';
import { uniqueAddress } from './helpers/mail.ts';
import { peopleOf } from './helpers/oauth.ts';
import { openBrowserContext } from './helpers/browser.ts';
import { startTestSystem, type TestSystem } from './helpers/system.ts';

const shots = path.join(process.env.CUADRA_TEST_OUTPUT ?? path.join(repoRoot, 'test-output'), 'screenshots');
// People are shared by every file of the system: an address no other test uses.
const person = { email: uniqueAddress('marta@andes.example'), password: 'dashboards 4 everyone' };

let sys: TestSystem;
let db: Connection;
let context: BrowserContext;
let key: string;
let dashboardId: string;
let seeded: Awaited<ReturnType<typeof seedReceivables>>;
const consoleProblems: string[] = [];

beforeAll(async () => {
  mkdirSync(shots, { recursive: true });
  sys = await startTestSystem('dashpage');
  const people = await peopleOf(sys);
  db = people.db;
  const ws = await sys.workspace('Ferretería Marta');
  key = ws.api_key;
  const user = await people.people.createUser({ email: person.email, name: 'Marta', password: person.password });
  await people.people.setMembership(ws.workspace_id, user._id, 'accountant');
  seeded = await seedReceivables(sys, key);
  const r = await sys.invoke('dashboards.save', mixedDashboard(), key);
  dashboardId = r.body.output.dashboard.id;
  // Debian's Chromium, driven by playwright-core (INFRA.md): a context of this file's own in the run's one browser.
  context = await openBrowserContext({ viewport: { width: 1280, height: 900 } });
});
afterAll(async () => {
  await context?.close();
  await db?.close();
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

describe('the dashboard page in Chromium', () => {
  it('asks a person to sign in, then draws the dashboard: grid, stats, charts, tables, agenda, errors per block', async () => {
    const page = await openPage();
    const res = await page.goto(`${sys.gatewayUrl}/dashboards/${dashboardId}`);
    expect(page.url()).toContain('/app/sign-in?next=');
    expect(res?.status()).toBe(200);
    await page.getByLabel('Correo electrónico').fill(person.email);
    await page.getByLabel('Contraseña').fill(person.password);
    await page.getByRole('button', { name: 'Iniciar sesión' }).click();
    await page.waitForURL(`**/dashboards/${dashboardId}`);
    await page.waitForSelector('body[data-ready="true"]');
    const csp = (await page.request.get(`${sys.gatewayUrl}/dashboards/${dashboardId}`)).headers()['content-security-policy'];
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');

    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Cobranza');
    // Stats: three cards, the third says its saved metric does not exist.
    const cards = page.locator('.t-stats .card');
    expect(await cards.count()).toBe(3);
    expect(await cards.nth(0).locator('.card-value').textContent()).toMatch(/\d/);
    expect(await cards.nth(0).locator('.spark').count()).toBe(1);
    expect(await cards.nth(2).textContent()).toContain('no saved metric "sin-guardar"');
    // Charts as SVG: bars, a pie with a legend, a line.
    expect(await page.locator('[data-type="chart"] svg.chart').count()).toBe(2);
    // The inventory chart: a saved metric the workspace does not have.
    await expect(page.locator('[data-type="chart"] .block-error').textContent()).resolves.toContain('no saved metric "sin-guardar"');
    expect(await page.locator('[data-type="chart"] svg.chart rect[fill]').count()).toBeGreaterThan(3);
    expect(await page.locator('.pie-wrap .legend li').count()).toBeGreaterThan(0);
    // The twelve-column grid: the two charts of the row sit side by side.
    const [left, right] = await Promise.all([page.locator('.row [data-type="chart"]').nth(0).boundingBox(), page.locator('.row [data-type="chart"]').nth(1).boundingBox()]);
    expect(right!.x).toBeGreaterThan(left!.x + left!.width - 1);
    expect(Math.abs(left!.width - right!.width)).toBeLessThan(4);
    // Waiting block, block errors, tabs.
    await expect(page.locator('section[data-path="5"] .waiting').textContent()).resolves.toContain('Elige una fila arriba');
    expect(await page.getByRole('tab').count()).toBe(3);
    await page.getByRole('tab', { name: 'Deals' }).click();
    await expect(page.locator('section[data-path="7.2"] .block-error').textContent()).resolves.toContain('no pipeline yet');
    await page.getByRole('tab', { name: 'Agenda' }).click();
    expect(await page.locator('.agenda li').count()).toBeGreaterThan(0);
    await page.screenshot({ path: path.join(shots, 'dashboard-desktop.png'), fullPage: true });
    await page.close();
  });

  it('a table row click drives the bound block; a param narrows the customers', async () => {
    const page = await openPage();
    await page.goto(`${sys.gatewayUrl}/dashboards/${dashboardId}`);
    await page.waitForSelector('body[data-ready="true"]');
    const customers = page.locator('section[data-path="4.1"] tbody tr');
    expect(await customers.count()).toBe(3);
    const buho = customers.filter({ hasText: 'Ferretería Búho Ltda' });
    await buho.click();
    expect(await buho.getAttribute('aria-selected')).toBe('true');
    const bound = page.locator('section[data-path="5"] tbody tr');
    await bound.first().waitFor();
    expect(await bound.count()).toBe(2);
    for (const text of await bound.allTextContents()) expect(text).toContain('Búho');
    // Another customer, chosen from the keyboard.
    await customers.filter({ hasText: 'Ana Gómez' }).focus();
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => (globalThis as any).document.querySelectorAll('section[data-path="5"] tbody tr').length === 1);
    expect(await bound.first().textContent()).toContain('Ana Gómez');
    await page.screenshot({ path: path.join(shots, 'dashboard-row-selected.png'), fullPage: true });

    await page.getByLabel('Customer contains').fill('andina');
    await page.getByLabel('Customer contains').press('Tab');
    await page.waitForFunction(() => (globalThis as any).document.querySelectorAll('section[data-path="4.1"] tbody tr').length === 1);
    expect(await customers.first().textContent()).toContain('Tienda Andina');
    await page.close();
  });

  it('submits a form action (after its confirm), and the live customers block re-queries on the ledger event', async () => {
    const page = await openPage();
    await page.goto(`${sys.gatewayUrl}/dashboards/${dashboardId}`);
    await page.waitForSelector('body[data-ready="true"]');
    await page.waitForSelector('body[data-live="connected"]');
    const customers = page.locator('section[data-path="4.1"] tbody tr');
    expect(await customers.count()).toBe(3);
    const form = page.locator('section[data-type="form"] form');
    await form.getByLabel('Nombre *').fill('Cerámicas del Valle');
    // The kind comes prefilled from the action's values.
    expect(await form.getByLabel('Tipo *').inputValue()).toBe('customer');
    const questions: string[] = [];
    page.once('dialog', (d) => { questions.push(d.message()); void d.accept(); });
    // Counted before the click: the ledger event may re-render the block before the action says "Done".
    const rendersBefore = Number(await page.evaluate(() => (globalThis as any).document.body.dataset.renders ?? '0'));
    await form.getByRole('button', { name: 'Create customer' }).click();
    await expect(form.locator('.action-result').filter({ hasText: 'Hecho' }).waitFor()).resolves.toBeUndefined();
    expect(questions).toEqual(['Create this customer?']);
    // parties.create lands on the ledger; only blocks listing "parties" re-query, once.
    await page.waitForFunction(() => (globalThis as any).document.querySelectorAll('section[data-path="4.1"] tbody tr').length === 4);
    expect((await customers.allTextContents()).some((t) => t.includes('Cerámicas del Valle'))).toBe(true);
    expect(Number(await page.evaluate(() => (globalThis as any).document.body.dataset.renders))).toBe(rendersBefore + 1);
    await page.screenshot({ path: path.join(shots, 'dashboard-form-submitted.png'), fullPage: true });
    const listed = await sys.invoke('records.list', { source: 'parties', search: 'cerámicas' }, key);
    expect(listed.body.output.rows).toHaveLength(1);
    await page.close();
  });

  it('types a secret argument of an action in a password field, never prefilled (issue 31, finding 1)', async () => {
    const saved = await sys.invoke('dashboards.save', { title: 'Nómina', blocks: [{ type: 'form', title: 'Nómina electrónica', actions: [{ tool: 'payroll.epayroll_configure', label: 'Registrar', values: { prefix: 'NE' } }] }] }, key);
    expect(saved.status).toBe(200);
    const page = await openPage();
    await page.goto(`${sys.gatewayUrl}/dashboards/${saved.body.output.dashboard.id}`);
    await page.waitForSelector('body[data-ready="true"]');
    const form = page.locator('section[data-type="form"] form');
    await form.locator('input[name="software_pin"]').waitFor();
    expect(await form.locator('input[name="software_pin"]').getAttribute('type')).toBe('password');
    expect(await form.locator('input[name="software_pin"]').getAttribute('autocomplete')).toBe('new-password');
    expect(await form.locator('input[name="software_pin"]').inputValue()).toBe('');
    expect(await form.locator('input[name="nit"]').getAttribute('type')).toBe('text');
    await page.screenshot({ path: path.join(shots, 'dashboard-secret-field.png'), fullPage: true });
    // A dashboard that would fix the PIN is refused at the value's pointer.
    const fixed = await sys.invoke('dashboards.save', { title: 'Mala', blocks: [{ type: 'form', actions: [{ tool: 'payroll.epayroll_configure', values: { software_pin: '1234' } }] }] }, key);
    expect(fixed.body).toMatchObject({ code: 'invalid_input', field: '/blocks/0/actions/0/values/software_pin' });
    await page.close();
  });

  it('reads on a phone: one column, no horizontal scroll of the page', async () => {
    const page = await context.newPage();
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${sys.gatewayUrl}/dashboards/${dashboardId}`);
    await page.waitForSelector('body[data-ready="true"]');
    const overflow = await page.evaluate(() => {
      const doc = (globalThis as any).document;
      const wide = [...doc.querySelectorAll('body *')].filter((e: any) => e.getBoundingClientRect().right > (globalThis as any).innerWidth + 1 && !e.closest('.table-wrap,.tablist')).slice(0, 3).map((e: any) => `${e.tagName}.${e.className}`);
      return { by: doc.documentElement.scrollWidth - (globalThis as any).innerWidth, wide };
    });
    expect(overflow).toEqual({ by: 0, wide: [] });
    const [a, b] = await Promise.all([page.locator('.row [data-type="chart"]').nth(0).boundingBox(), page.locator('.row [data-type="chart"]').nth(1).boundingBox()]);
    expect(b!.y).toBeGreaterThan(a!.y + a!.height - 1);
    await page.screenshot({ path: path.join(shots, 'dashboard-phone.png'), fullPage: true });
    await page.close();
  });

  it('refuses a dashboard of another workspace, and no page logged a CSP violation or script error', async () => {
    const other = await sys.workspace('Otra SAS');
    const foreign = (await sys.invoke('dashboards.save', { title: 'Secret', blocks: [{ type: 'text', markdown: 'secret' }] }, other.api_key)).body.output.dashboard.id;
    const page = await openPage();
    // The person's dashboards, by workspace: theirs only.
    await page.goto(`${sys.gatewayUrl}/dashboards`);
    expect(await page.getByRole('link', { name: 'Cobranza' }).getAttribute('href')).toBe(`/dashboards/${dashboardId}`);
    expect(await page.getByRole('link', { name: 'Secret' }).count()).toBe(0);
    const res = await page.goto(`${sys.gatewayUrl}/dashboards/${foreign}`);
    expect(res?.status()).toBe(404);
    expect(await page.content()).not.toContain('secret');
    await page.close();
    expect(consoleProblems.filter((p) => !/status of 40[34]/.test(p))).toEqual([]);
    expect(seeded.invoices.length).toBe(6);
  });
});
