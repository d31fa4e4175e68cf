// The sales board a person works on (/app/crm), in Debian's Chromium: drawn from the default
// pipeline's kanban block, moved by keyboard alone (focus, Space, arrows, Space — each step
// announced) and by drag and drop, each move through REST deals.move with the person's token; axe
// finds no serious or critical problem in Spanish or English; the screenshots are kept.
import path from 'node:path';
import type { Connection } from 'mongoose';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeProblems, openBrowser, pageWatching, SHOTS as shots } from './helpers/browser.ts';
import { uniqueAddress } from './helpers/mail.ts';
import { peopleOf } from './helpers/oauth.ts';
import { startTestSystem, type TestSystem } from './helpers/system.ts';

// People are shared by every file of the system: an address no other test uses.
const person = { email: uniqueAddress('andres@ventas.example'), password: 'vender antes de facturar' };

let sys: TestSystem;
let db: Connection;
let context: BrowserContext;
let closeBrowser: (() => Promise<void>) | undefined;
let key: string;
let stages: Record<string, string>;
const deals: Record<string, string> = {};
const consoleProblems: string[] = [];

async function ok(tool: string, input: unknown): Promise<any> {
  const r = await sys.invoke(tool, input, key);
  if (r.status !== 200) throw new Error(`${tool} → ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.output;
}

beforeAll(async () => {
  sys = await startTestSystem('crmpage');
  const people = await peopleOf(sys);
  db = people.db;
  const ws = await sys.workspace('Distribuciones Andrés');
  key = ws.api_key;
  const user = await people.people.createUser({ email: person.email, name: 'Andrés', password: person.password });
  await people.people.setMembership(ws.workspace_id, user._id, 'member');
  const { pipeline } = await ok('pipelines.create', {
    name: 'Ventas', stages: [
      { name: 'Prospecto', kind: 'open', probability_ppm: 100_000, rotting_days: 10 }, { name: 'Propuesta', kind: 'open', probability_ppm: 400_000 },
      { name: 'Negociación', kind: 'open', probability_ppm: 700_000 }, { name: 'Ganado', kind: 'won' },
    ],
  });
  stages = Object.fromEntries(pipeline.stages.map((s: any) => [s.name, s.id]));
  const party = (await ok('parties.create', { name: 'Tienda Andina SAS', kind: 'customer' })).party;
  for (const [title, amount] of [['Licencias', 1_200_000_00], ['Soporte anual', 350_000_00], ['Capacitación', 80_000_00]] as const) {
    deals[title] = (await ok('deals.create', { title, amount, party_id: party.id, expected_close: '2026-12-15' })).deal.id;
  }
  await ok('deals.move', { id: deals['Soporte anual'], stage_id: stages.Propuesta });
  ({ context, close: closeBrowser } = await openBrowser());
});
afterAll(async () => {
  await closeBrowser?.();
  await db?.close();
  await sys?.stop();
});

const openPage = () => pageWatching(context, consoleProblems);

const columnTitles = (page: Page, stage: string) => page.locator(`.column[data-column-id="${stage}"] .card .card-title`).allTextContents();
const stageOf = async (id: string) => (await ok('deals.get', { id })).deal;

describe('the sales board in Chromium', () => {
  let page: Page;

  it('signs in and shows the default pipeline in Spanish, with counts, sums and no axe problem', async () => {
    page = await openPage();
    await page.goto(`${sys.gatewayUrl}/app/crm`);
    expect(page.url()).toContain('/app/sign-in?next=');
    await page.getByLabel('Correo electrónico').fill(person.email);
    await page.getByLabel('Contraseña').fill(person.password);
    await page.getByRole('button', { name: 'Iniciar sesión' }).click();
    await page.waitForURL('**/app/crm');
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Tablero de ventas · Ventas');
    expect(await columnTitles(page, stages.Prospecto)).toEqual(['Capacitación', 'Licencias']);
    expect(await columnTitles(page, stages.Propuesta)).toEqual(['Soporte anual']);
    // 1,280,000 pesos in Prospecto, weighted 10 % = 128,000.
    expect(await page.locator(`.column[data-column-id="${stages.Prospecto}"] .column-summary`).textContent()).toMatch(/2 negocios · COP\s?1\.280\.000 · ponderado COP\s?128\.000/);
    expect(await page.locator('body.board-enhanced').count()).toBe(1);
    // A calendar date stays that date (not the day before in Bogotá).
    expect(await page.locator(`[data-card-id="${deals.Licencias}"]`).textContent()).toContain('Cierre previsto 15/12/2026');
    expect(await page.locator(`.column[data-column-id="${stages.Propuesta}"] .column-summary`).textContent()).toMatch(/^1 negocio · /);
    expect(await axeProblems(page)).toEqual([]);
    await page.screenshot({ path: path.join(shots, 'crm-board-es.png'), fullPage: true });
  });

  it('moves a card with the keyboard alone, announcing each step', async () => {
    const card = page.locator(`[data-card-id="${deals.Licencias}"]`);
    await card.focus();
    await page.keyboard.press('Space');
    await expect.poll(() => page.locator('#board-live').textContent()).toContain('Tomaste Licencias');
    await page.keyboard.press('ArrowRight');
    await expect.poll(() => page.locator('#board-live').textContent()).toContain('Propuesta, posición 2 de 2');
    await page.keyboard.press('ArrowUp');
    await expect.poll(() => page.locator('#board-live').textContent()).toContain('Propuesta, posición 1 de 2');
    await page.screenshot({ path: path.join(shots, 'crm-board-keyboard-lifted.png') });
    await page.keyboard.press('Space');
    await expect.poll(() => page.locator('#board-live').textContent()).toContain('Licencias quedó en Propuesta, posición 1 de 2');
    await expect.poll(() => columnTitles(page, stages.Propuesta)).toEqual(['Licencias', 'Soporte anual']);
    // Stored as the page shows it: its stage, its history, above Soporte anual; focus is back on the card.
    const deal = await stageOf(deals.Licencias);
    expect(deal.stage_id).toBe(stages.Propuesta);
    expect(deal.history.map((h: any) => h.to)).toEqual([stages.Prospecto, stages.Propuesta]);
    expect(await page.evaluate(() => (globalThis as any).document.activeElement?.dataset.cardId)).toBe(deals.Licencias);
    // Escape puts a lifted card back and changes nothing.
    await page.keyboard.press('Enter');
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('Escape');
    await expect.poll(() => page.locator('#board-live').textContent()).toContain('Movimiento cancelado');
    expect(await columnTitles(page, stages.Propuesta)).toEqual(['Licencias', 'Soporte anual']);
    expect((await stageOf(deals.Licencias)).stage_id).toBe(stages.Propuesta);
  });

  it('moves a card by drag and drop', async () => {
    await page.dragAndDrop(`[data-card-id="${deals['Capacitación']}"]`, `.column[data-column-id="${stages['Negociación']}"] ol.cards`);
    await expect.poll(() => columnTitles(page, stages['Negociación'])).toEqual(['Capacitación']);
    await expect.poll(async () => (await stageOf(deals['Capacitación'])).stage_id).toBe(stages['Negociación']);
    expect(await columnTitles(page, stages.Prospecto)).toEqual([]);
    await page.screenshot({ path: path.join(shots, 'crm-board-after-moves.png'), fullPage: true });
  });

  it('moves a card from a dashboard\'s kanban block through deals.move (the canvas action), once', async () => {
    const { dashboard } = await ok('dashboards.save', { title: 'Embudo', blocks: [{ type: 'kanban', title: 'Negocios', board: { pipeline: '', limit: 25 } }] });
    await page.goto(`${sys.gatewayUrl}/dashboards/${dashboard.id}`);
    await page.waitForSelector('body[data-ready="true"]');
    const card = page.locator(`.t-kanban li[data-deal="${deals['Soporte anual']}"]`);
    await card.getByLabel('Mover a').selectOption(stages['Negociación']);
    await card.getByRole('button', { name: 'Mover' }).click();
    await expect.poll(async () => (await stageOf(deals['Soporte anual'])).stage_id).toBe(stages['Negociación']);
    await expect.poll(() => page.locator(`.t-kanban section[aria-label="Negociación"] li[data-deal="${deals['Soporte anual']}"]`).count()).toBe(1);
    expect((await stageOf(deals['Soporte anual'])).history).toHaveLength(3);
    expect(await axeProblems(page)).toEqual([]);
    await page.screenshot({ path: path.join(shots, 'crm-dashboard-kanban.png'), fullPage: true });
  });

  it('speaks English on request, with no axe problem and no console error', async () => {
    await page.goto(`${sys.gatewayUrl}/app/crm?lang=en`);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Sales board · Ventas');
    expect(await page.locator('#board-help').textContent()).toContain('press Space to pick it up');
    expect(await axeProblems(page)).toEqual([]);
    await page.screenshot({ path: path.join(shots, 'crm-board-en.png'), fullPage: true });
    expect(consoleProblems).toEqual([]);
  });
});
