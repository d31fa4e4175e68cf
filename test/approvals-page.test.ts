import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../scripts/infra.ts';
import { mixedDashboard, seedReceivables } from './helpers/canvas.ts';
import { claimCodeFor, uniqueAddress } from './helpers/mail.ts';
import { FormAgent, formFields } from './helpers/oauth.ts';
import { openBrowserContext } from './helpers/browser.ts';
import { startTestSystem, type TestSystem } from './helpers/system.ts';

const shots = path.join(process.env.CUADRA_TEST_OUTPUT ?? path.join(repoRoot, 'test-output'), 'screenshots');
// axe-core, the accessibility checker, evaluated in the page (DevTools evaluation is not bound by the page's CSP).
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
// People and the mailbox are shared by every file of the system: an address no other test uses.
const owner = { email: uniqueAddress('lucia@andes.example'), password: 'pan de yuca 2026' };

let sys: TestSystem;
let context: BrowserContext;
let agentKey: string;
let ownerKey: string;
let workspaceId: string;
let seeded: Awaited<ReturnType<typeof seedReceivables>>;
let invoiceNumber: string;
let dashboardId: string;
const consoleProblems: string[] = [];

beforeAll(async () => {
  mkdirSync(shots, { recursive: true });
  sys = await startTestSystem('inbox');
  // An agent opens the workspace for Lucía; she claims it with the code e-mailed to her.
  const opened = await sys.fetch('/v1/auth/agent-signup', { body: { email: owner.email, workspace_name: 'Panadería Lucía', agent_name: 'Contador IA', name: 'Lucía' } });
  expect(opened.status).toBe(201);
  agentKey = opened.body.api_key;
  workspaceId = opened.body.workspace_id;
  const forms = new FormAgent(sys.gatewayUrl);
  const claim = await forms.get(opened.body.claim_url);
  const done = await forms.post('/claim', { ...formFields(claim.text), code: await claimCodeFor(owner.email), name: 'Lucía Pérez', password: owner.password });
  expect(done.status).toBe(200);
  // Her books, set up through an owner key (the agent's writes would be held).
  ownerKey = (await sys.key(workspaceId, 'owner')).api_key;
  seeded = await seedReceivables(sys, ownerKey);
  invoiceNumber = (await sys.invoke('invoices.get', { id: seeded.invoices[1] }, ownerKey)).body.output.invoice.number;
  dashboardId = (await sys.invoke('dashboards.save', mixedDashboard(), ownerKey)).body.output.dashboard.id;
  // Debian's Chromium, driven by playwright-core (INFRA.md): a context of this file's own in the run's one browser.
  context = await openBrowserContext({ viewport: { width: 1280, height: 900 } });
});
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
  page.on('response', (r) => { if (r.status() >= 400 && !/\/decide$/.test(r.url())) consoleProblems.push(`${r.status()} ${r.url()}`); });
  return page;
}

/** axe-core's serious and critical violations on the page as it is now (WCAG 2.x A/AA and best practices). */
async function axeProblems(page: Page): Promise<string[]> {
  await page.evaluate(AXE_SOURCE);
  const result = await page.evaluate(async () => (globalThis as any).axe.run((globalThis as any).document, { resultTypes: ['violations'] }));
  return (result.violations as { id: string; impact: string; nodes: { target: string[] }[] }[])
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.impact} ${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

/** Presses Tab until `locator` has the focus (at most `max` presses); answers how many it took. */
async function tabTo(page: Page, selector: string, max = 80): Promise<number> {
  for (let i = 1; i <= max; i++) {
    await page.keyboard.press('Tab');
    if (await page.evaluate((s) => (globalThis as any).document.activeElement?.matches(s) ?? false, selector)) return i;
  }
  throw new Error(`Tab never reached ${selector}`);
}

describe('the approvals inbox in Chromium', () => {
  let page: Page;
  let paymentApproval: string;

  it('asks to sign in, in Spanish by default, and passes axe', async () => {
    const held = await sys.invoke('payments.register', { customer_id: seeded.parties.andina.id, amount: 120000000, currency: 'COP', invoices: [{ invoice_id: seeded.invoices[1] }] }, agentKey);
    expect(held.status).toBe(202);
    paymentApproval = held.body.approval_id;

    page = await openPage();
    await page.goto(`${sys.gatewayUrl}/app/approvals`);
    expect(page.url()).toContain('/app/sign-in?next=%2Fapp%2Fapprovals');
    expect(await page.getAttribute('html', 'lang')).toBe('es-CO');
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Inicia sesión en Cuadra');
    expect(await axeProblems(page)).toEqual([]);
    await page.screenshot({ path: path.join(shots, 'sign-in-es.png'), fullPage: true });
    await page.getByLabel('Correo electrónico').fill(owner.email);
    await page.getByLabel('Contraseña').fill(owner.password);
    await page.getByRole('button', { name: 'Iniciar sesión' }).click();
    await page.waitForURL('**/app/approvals');
  });

  it('shows the held payment in words, who asked and the policy that held it; the input in full on demand', async () => {
    await page.waitForSelector('body[data-live="connected"]');
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Aprobaciones de Panadería Lucía');
    const item = page.locator(`#${paymentApproval}`);
    // 120.000.000 centavos = COP 1.200.000, from Tienda Andina SAS, against the invoice's number.
    await expect(item.locator('h3').textContent()).resolves.toBe(`Registrar un pago de COP 1.200.000 de Tienda Andina SAS contra ${invoiceNumber}Pendiente`);
    const text = await item.textContent();
    expect(text).toContain('el agente Contador IA');
    expect(text).toContain('payments.register');
    const policies = await sys.invoke('policies.list', {}, ownerKey);
    expect(text).toContain(`«${policies.body.output.rows[0].name}»`);
    await item.getByText('Ver la entrada completa').click();
    expect(JSON.parse((await item.locator('details pre').first().textContent())!)).toEqual({ customer_id: seeded.parties.andina.id, amount: 120000000, currency: 'COP', invoices: [{ invoice_id: seeded.invoices[1] }] });
    // What approving would do — the payment's dry run, made when it was held: the journal entry
    // (COP 1.200.000 into the bank, the same out of receivables and customer advances) and the records.
    const dry = item.locator('section.dry-run');
    await expect(dry.getByRole('heading', { level: 4 }).textContent()).resolves.toBe('Si se aprueba');
    const held = (await sys.invoke('approvals.get', { id: paymentApproval }, ownerKey)).body.output.approval.preview;
    const lines = held.journal_lines as { account: string; debit: number; credit: number }[];
    const journal = await dry.locator('table.journal tbody tr').allTextContents();
    expect(journal).toHaveLength(lines.length);
    expect(lines.reduce((s, l) => s + l.debit, 0)).toBe(120_000_000);
    expect(lines.reduce((s, l) => s + l.credit, 0)).toBe(120_000_000);
    lines.forEach((l, i) => {
      expect(journal[i]).toContain(l.account);
      expect(journal[i]).toContain((Math.max(l.debit, l.credit) / 100).toLocaleString('es-CO'));
    });
    const records = await dry.locator('table:not(.journal) tr.record').allTextContents();
    expect(records.some((r) => r.includes('payments') && r.includes('nuevo'))).toBe(true);
    expect(records.some((r) => r.includes(seeded.invoices[1]) && r.includes('cambia'))).toBe(true);
    expect(await axeProblems(page)).toEqual([]);
    await page.screenshot({ path: path.join(shots, 'inbox-pending-es.png'), fullPage: true });
  });

  it('receives a new held call live, without a reload', async () => {
    await page.evaluate(() => { (globalThis as any).stillHere = true; });
    const held = await sys.invoke('parties.create', { name: 'Harinas del Valle', kind: 'vendor' }, agentKey);
    expect(held.status).toBe(202);
    const fresh = page.locator(`#pending-list > #${held.body.approval_id}`);
    await fresh.waitFor({ timeout: 10_000 });
    expect(await page.evaluate(() => (globalThis as any).stillHere)).toBe(true);
    await expect(fresh.locator('h3').textContent()).resolves.toContain('Crear el proveedor «Harinas del Valle»');
    // Newest first.
    expect(await page.locator('#pending-list > li').evaluateAll((els) => els.map((e) => e.id))).toEqual([held.body.approval_id, paymentApproval]);
    await expect(page.locator('#live-status').textContent()).resolves.toBe('Llegó una solicitud nueva.');
  });

  it('is approved from the keyboard alone, with visible focus; the ledger records the person’s decision and the call runs', async () => {
    await page.locator('#main').focus();
    await tabTo(page, `#reason-${paymentApproval}`);
    await page.keyboard.type('Confirmado con el extracto');
    await page.keyboard.press('Tab');
    const focused = await page.evaluate(() => {
      const el = (globalThis as any).document.activeElement;
      const style = (globalThis as any).getComputedStyle(el);
      return { text: el.textContent, value: el.value, outline: style.outlineStyle, width: style.outlineWidth };
    });
    expect(focused).toMatchObject({ text: 'Aprobar', value: 'approve', outline: 'solid', width: '3px' });
    await page.screenshot({ path: path.join(shots, 'inbox-keyboard-focus.png'), fullPage: false });
    await page.keyboard.press('Enter');
    await page.waitForURL(/decided=approve/);
    await expect(page.locator('#notice').textContent()).resolves.toBe('Aprobaste la llamada payments.register.');
    await page.waitForSelector('body[data-live="connected"]');
    // The held call runs in its owning service; its result arrives live.
    const doneItem = page.locator(`#done-list > #${paymentApproval}`);
    await page.waitForSelector(`#done-list > #${paymentApproval}.executed`, { timeout: 15_000 });
    const text = await doneItem.textContent();
    expect(text).toContain('Ejecutada');
    expect(text).toContain('Confirmado con el extracto');
    expect(text).toContain('Lucía Pérez');
    expect(text).toMatch(/200\s*ok/);
    await page.screenshot({ path: path.join(shots, 'inbox-approved-es.png'), fullPage: true });

    const approval = await sys.invoke('approvals.get', { id: paymentApproval }, ownerKey);
    const lucia = (await sys.invoke('members.list', {}, ownerKey)).body.output.rows.find((m: any) => m.email === owner.email);
    // The page decided as Lucía, through the first-party web client.
    expect(approval.body.output.approval).toMatchObject({ status: 'executed', reason: 'Confirmado con el extracto', decided_by: { type: 'oauth_app', id: 'cuadra-web', person: lucia.user_id } });
    const ledger = await sys.invoke('ledger.list', { tool: 'approvals.decide' }, ownerKey);
    const entries = ledger.body.output.rows.filter((e: any) => e.outcome === 'ok');
    expect(entries).toHaveLength(1);
    expect(entries[0].actor).toEqual({ type: 'oauth_app', id: 'cuadra-web' });
    // The held payment ran once, as the agent: invoice 2 is 4 h × COP 150.000 = 600.000 + IVA 19 % 114.000
    // = COP 714.000 (71.400.000 centavos), paid in full; the rest, 1.200.000 − 714.000 = 486.000, is customer credit.
    const run = approval.body.output.approval.result.body.output.payment;
    expect(run).toMatchObject({ amount: 120000000, applied: 71400000, unapplied: 48600000 });
    const inv = await sys.invoke('invoices.get', { id: seeded.invoices[1] }, ownerKey);
    expect(inv.body.output.invoice.paid).toBe(71400000);
  });

  it('rejects the other with a reason; a decided call is listed with it', async () => {
    const item = page.locator('#pending-list > li').first();
    const id = await item.getAttribute('id');
    await item.getByLabel('Motivo (opcional)').fill('Ese proveedor ya existe');
    await item.getByRole('button', { name: 'Rechazar' }).click();
    await page.waitForURL(/decided=reject/);
    const done = page.locator(`#done-list > #${id}`);
    await expect(done.textContent()).resolves.toContain('Ese proveedor ya existe');
    expect(await done.getAttribute('class')).toContain('rejected');
    await expect(page.locator('#pending-empty').isVisible()).resolves.toBe(true);
    expect(await axeProblems(page)).toEqual([]);
    await page.screenshot({ path: path.join(shots, 'inbox-decided-es.png'), fullPage: true });
  });

  it('switches to English, remembers it across pages, and formats money and dates per locale', async () => {
    await page.getByRole('link', { name: 'English' }).click();
    await page.waitForURL(/lang=en/);
    expect(await page.getAttribute('html', 'lang')).toBe('en');
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Approvals of Panadería Lucía');
    await expect(page.locator(`#${paymentApproval} h3`).textContent()).resolves.toContain(`Register a payment of COP 1,200,000 from Tienda Andina SAS against ${invoiceNumber}`);
    const when = await page.locator(`#${paymentApproval} time`).first().getAttribute('datetime');
    const [y, m, d] = new Date(when!).toLocaleDateString('en-CA', { timeZone: 'America/Bogota' }).split('-');
    await expect(page.locator(`#${paymentApproval} time`).first().textContent()).resolves.toContain(`${m}/${d}/${y}`);
    expect(await axeProblems(page)).toEqual([]);
    await page.screenshot({ path: path.join(shots, 'inbox-en.png'), fullPage: true });
    // Remembered: the dashboards pages, without ?lang, are in English.
    await page.getByRole('link', { name: 'Dashboards' }).click();
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Dashboards');
    expect(await axeProblems(page)).toEqual([]);
    await page.screenshot({ path: path.join(shots, 'dashboards-list-en.png'), fullPage: true });
    // And back to Spanish, with the date as 22/11/2026 is written in Colombia.
    await page.goto(`${sys.gatewayUrl}/app/approvals?lang=es`);
    await expect(page.locator(`#${paymentApproval} time`).first().textContent()).resolves.toContain(`${d}/${m}/${y}`);
  });

  it('the dashboard page passes axe, with its chrome in Spanish', async () => {
    await page.goto(`${sys.gatewayUrl}/dashboards/${dashboardId}`);
    await page.waitForSelector('body[data-ready="true"]');
    expect(await page.getAttribute('html', 'lang')).toBe('es-CO');
    await expect(page.getByRole('button', { name: 'Cerrar sesión' }).count()).resolves.toBe(1);
    expect(await axeProblems(page)).toEqual([]);
    await page.screenshot({ path: path.join(shots, 'dashboard-es.png'), fullPage: true });
    await page.goto(`${sys.gatewayUrl}/dashboards`);
    expect(await axeProblems(page)).toEqual([]);
  });

  it('refuses a decision without the form token, and no script or style broke the CSP', async () => {
    const res = await page.request.post(`${sys.gatewayUrl}/app/approvals/apr_x/decide`, { form: { decision: 'approve', ws: workspaceId } });
    expect(res.status()).toBe(403);
    expect(consoleProblems).toEqual([]);
  });
});
