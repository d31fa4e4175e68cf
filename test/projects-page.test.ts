// A project's task board (/app/projects), in Debian's Chromium: a column per status (the project's
// columns, in order), each column's cards in their board order; a card moved by keyboard alone
// (focus, Space, arrows, Space — announced) and, without script, by its form — both through
// tasks.move with the person's token; axe finds no serious or critical problem; screenshots kept.
import path from 'node:path';
import type { Connection } from 'mongoose';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeProblems, openBrowser, openBrowserContext, pageWatching, SHOTS as shots } from './helpers/browser.ts';
import { uniqueAddress } from './helpers/mail.ts';
import { peopleOf } from './helpers/oauth.ts';
import { startTestSystem, type TestSystem } from './helpers/system.ts';

const person = { email: uniqueAddress('lucia@proyectos.example'), password: 'primero lo urgente' };

let sys: TestSystem;
let db: Connection;
let context: BrowserContext;
let noJs: BrowserContext;
let closeBrowser: (() => Promise<void>) | undefined;
let key: string;
let project: { id: string; columns: string[] };
const tasks: Record<string, string> = {};
const consoleProblems: string[] = [];

beforeAll(async () => {
  sys = await startTestSystem('projectspage');
  const people = await peopleOf(sys);
  db = people.db;
  const ws = await sys.workspace('Estudio Lucía');
  key = ws.api_key;
  const user = await people.people.createUser({ email: person.email, name: 'Lucía', password: person.password });
  await people.people.setMembership(ws.workspace_id, user._id, 'member');
  project = (await sys.output('projects.create', { name: 'Sitio web', key: 'WEB', columns: ['Por hacer', 'En curso', 'Hecho'] }, key)).project;
  for (const [title, extra] of [['Maqueta', { due_date: '2026-12-15', assignee_email: 'ana@estudio.example' }], ['Textos', {}], ['Fotos', { checklist: ['Oficina', 'Equipo'] }]] as const) {
    tasks[title] = (await sys.output('tasks.create', { project_id: project.id, title, ...extra }, key)).task.id;
  }
  await sys.output('tasks.update', { id: tasks.Fotos, checklist: [{ text: 'Oficina', done: true }, { text: 'Equipo', done: false }] }, key);
  await sys.output('tasks.move', { id: tasks.Textos, column: 'En curso' }, key);
  ({ context, close: closeBrowser } = await openBrowser());
  noJs = await openBrowserContext({ javaScriptEnabled: false, locale: 'es-CO' });
});
afterAll(async () => {
  await noJs?.close();
  await closeBrowser?.();
  await db?.close();
  await sys?.stop();
});

const titles = (page: Page, column: string) => page.locator(`.column[data-column-id="${column}"] .card .card-title`).allTextContents();
const taskOf = async (id: string) => (await sys.output('tasks.list', { project_id: project.id, limit: 100 }, key)).rows.find((t: any) => t.id === id);
const signIn = async (page: Page) => {
  await page.goto(`${sys.gatewayUrl}/app/projects`);
  await page.getByLabel('Correo electrónico').fill(person.email);
  await page.getByLabel('Contraseña').fill(person.password);
  await page.getByRole('button', { name: 'Iniciar sesión' }).click();
  await page.waitForURL('**/app/projects');
};

describe('the project board in Chromium', () => {
  it('shows the project\'s columns in order with their tasks, and moves a card by keyboard alone through tasks.move', async () => {
    const page = await pageWatching(context, consoleProblems);
    await signIn(page);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Proyecto · Sitio web');
    expect(await page.locator('.column h2').allTextContents()).toEqual(['Por hacer', 'En curso', 'Hecho']);
    // New tasks go last in their column: created Maqueta, Textos, Fotos; Textos moved on.
    expect(await titles(page, 'Por hacer')).toEqual(['WEB-1 · Maqueta', 'WEB-3 · Fotos']);
    expect(await titles(page, 'En curso')).toEqual(['WEB-2 · Textos']);
    const maqueta = page.locator(`[data-card-id="${tasks.Maqueta}"]`);
    expect(await maqueta.textContent()).toContain('ana@estudio.example');
    expect(await maqueta.textContent()).toContain('Vence 15/12/2026');
    expect(await page.locator(`[data-card-id="${tasks.Fotos}"]`).textContent()).toContain('Lista: 1 de 2');
    expect(await page.locator('body.board-enhanced').count()).toBe(1);
    expect(await axeProblems(page)).toEqual([]);
    await page.screenshot({ path: path.join(shots, 'projects-board.png'), fullPage: true });

    // Fotos: picked up, one column right (below Textos), one up (above it), dropped.
    await page.locator(`[data-card-id="${tasks.Fotos}"]`).focus();
    await page.keyboard.press('Space');
    await expect.poll(() => page.locator('#board-live').textContent()).toContain('Tomaste WEB-3 · Fotos');
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('ArrowUp');
    await expect.poll(() => page.locator('#board-live').textContent()).toContain('En curso, posición 1 de 2');
    await page.keyboard.press('Space');
    await expect.poll(() => page.locator('#board-live').textContent()).toContain('WEB-3 · Fotos quedó en En curso, posición 1 de 2');
    await expect.poll(() => titles(page, 'En curso')).toEqual(['WEB-3 · Fotos', 'WEB-2 · Textos']);
    // Stored as shown: its column, and an order key before Textos'.
    const [fotos, textos] = [await taskOf(tasks.Fotos), await taskOf(tasks.Textos)];
    expect(fotos.column).toBe('En curso');
    expect(fotos.sort_key < textos.sort_key).toBe(true);
    expect(await page.evaluate(() => (globalThis as any).document.activeElement?.dataset.cardId)).toBe(tasks.Fotos);
    await page.screenshot({ path: path.join(shots, 'projects-board-moved.png'), fullPage: true });
    expect(consoleProblems).toEqual([]);
  });

  it('moves a card without JavaScript through its form', async () => {
    const page = await pageWatching(noJs, consoleProblems);
    page.setDefaultTimeout(10_000);
    await signIn(page);
    const card = page.locator(`[data-card-id="${tasks.Maqueta}"]`);
    await card.getByLabel('Mover a').selectOption('Hecho');
    await Promise.all([page.waitForURL((u) => u.searchParams.get('moved') === 'ok', { timeout: 10_000 }), card.getByRole('button', { name: 'Mover' }).click()]);
    expect(await page.locator('#notice').textContent()).toBe('Tarea movida.');
    expect(await titles(page, 'Hecho')).toEqual(['WEB-1 · Maqueta']);
    expect((await taskOf(tasks.Maqueta)).column).toBe('Hecho');
    // (axe runs as script: this page was checked with JavaScript on above; its markup is the same.)
    await page.screenshot({ path: path.join(shots, 'projects-board-no-script.png'), fullPage: true });
  });
});
