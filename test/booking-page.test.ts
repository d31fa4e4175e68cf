// The public booking page /book/<workspace slug>/<type>, in Debian's Chromium with JavaScript off
// (plain forms: choose a week and a zone, pick a slot, book) and on; the gateway resolves the
// workspace's slug and limits posts; Spanish first; axe finds no serious or critical problem; the
// booking, its calendar event and its e-mailed invitation exist; a slot taken meanwhile is refused
// with a clear message and nothing booked twice. Screenshots are kept.
import path from 'node:path';
import type { BrowserContext } from 'playwright-core';
import { Agent, fetch as fetchFrom } from 'undici';
import mongoose from 'mongoose';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { colombianHolidays } from '@cuadra/shared';
import { axeProblems, openBrowserContext, pageWatching, SHOTS as shots } from './helpers/browser.ts';
import { messagesTo, uniqueAddress } from './helpers/mail.ts';
import { startTestSystem, type TestSystem } from './helpers/system.ts';
import { EVENT_WAIT_MS } from './helpers/until.ts';

let sys: TestSystem;
let key: string;
let slug: string;
let noJs: BrowserContext;
let withJs: BrowserContext;
const problems: string[] = [];

beforeAll(async () => {
  sys = await startTestSystem('bookingpage');
  const ws = await sys.workspace('Consultora Ñandú S.A.S.');
  key = ws.api_key;
  slug = (await sys.identity.slugOf(ws.workspace_id))!;
  await sys.output('booking_types.create', {
    slug: 'diagnostico', name: 'Diagnóstico inicial', description: 'Una hora para entender tu empresa.', duration_min: 60, min_notice_min: 60, window_days: 60,
    weekly: Object.fromEntries(['mon', 'tue', 'wed', 'thu', 'fri'].map((d) => [d, [{ start: '09:00', end: '12:00' }]])),
    location: 'Calle 93 # 11-26, Bogotá', questions: [{ key: 'empresa', label: 'Empresa', required: true }],
  }, key);
  [noJs, withJs] = await Promise.all([openBrowserContext({ javaScriptEnabled: false, locale: 'es-CO' }), openBrowserContext({ locale: 'es-CO' })]);
});
afterAll(async () => {
  await Promise.all([noJs?.close(), withJs?.close()]);
  await sys?.stop();
});

const plusDays = (d: string, n: number) => new Date(Date.parse(`${d}T12:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);
/** A weekday at least 3 days ahead that is not a Colombian holiday. */
function nextWeekday(): string {
  for (let d = plusDays(new Date().toISOString().slice(0, 10), 3); ; d = plusDays(d, 1)) {
    const wd = new Date(`${d}T12:00:00Z`).getUTCDay();
    if (wd >= 1 && wd <= 5 && !colombianHolidays(Number(d.slice(0, 4))).some((h) => h.date === d)) return d;
  }
}
/** The one-time token of the booking form a GET of the page gives (a double submit of it books once). */
async function formToken(url: string): Promise<string> {
  const html = await (await fetch(`${url}?fecha=${nextWeekday()}`)).text();
  const token = /name="ficha" value="([A-Za-z0-9_-]+)"/.exec(html)?.[1];
  if (!token) throw new Error('the page has no form token');
  return token;
}
/** Madrid's UTC offset on a date by the EU rule: +2 from the last Sunday of March to the last Sunday of October, else +1. */
function madridOffset(date: string): number {
  const lastSunday = (m: number) => {
    const last = new Date(Date.UTC(Number(date.slice(0, 4)), m, 0));
    return new Date(last.getTime() - last.getUTCDay() * 86_400_000).toISOString().slice(0, 10);
  };
  return date >= lastSunday(3) && date < lastSunday(10) ? 2 : 1;
}

describe('the public booking page', () => {
  it('books without JavaScript from another zone, e-mails the invitation, and refuses the same slot to a second visitor with JavaScript on', async () => {
    const day = nextWeekday();
    const url = `${sys.gatewayUrl}/book/${slug}/diagnostico`;
    expect(slug).toMatch(/^consultora-nandu-s-a-s(-[0-9a-f]{6})?$/);

    const page = await pageWatching(noJs, problems);
    const first = await page.goto(`${url}?fecha=${day}&zona=Europe/Madrid`);
    expect(first?.status()).toBe(200);
    expect(await page.locator('h1').textContent()).toBe('Diagnóstico inicial');
    // 09:00 Bogotá (UTC−5) is 14:00Z, 14 + offset o'clock in Madrid.
    const radio = page.locator(`input[name=inicio][value="${day}T14:00:00.000Z"]`);
    const label = page.locator(`label[for="${await radio.getAttribute('id')}"]`);
    expect((await label.textContent())?.trim()).toBe(`${14 + madridOffset(day)}:00`);
    // The visitor who will lose the race has the page open already (JavaScript on).
    const late = await pageWatching(withJs, problems);
    await late.goto(`${url}?fecha=${day}&zona=America/Bogota`);
    expect(await axeProblems(late)).toEqual([]);

    const email = uniqueAddress('marta@cliente.example');
    await radio.check();
    await page.fill('#nombre', 'Marta Núñez');
    await page.fill('#correo', email);
    await page.fill('#p-empresa', 'Ñandú SAS');
    await page.screenshot({ path: path.join(shots, 'booking-page-form.png'), fullPage: true });
    const [done] = await Promise.all([page.waitForNavigation(), page.click('button:has-text("Reservar")')]);
    expect(done?.status()).toBe(201);
    expect(await page.locator('h1').textContent()).toBe('Reserva confirmada');
    expect(await page.locator('main').textContent()).toContain(`Enviamos la invitación para tu calendario a ${email.toLowerCase()}`);
    await page.screenshot({ path: path.join(shots, 'booking-page-done.png'), fullPage: true });

    const booked = (await sys.output('bookings.list', { search: email.toLowerCase() }, key)).rows;
    expect(booked).toHaveLength(1);
    const booking = (await sys.output('bookings.get', { id: booked[0].id }, key)).booking;
    expect(booking).toMatchObject({ start: `${day}T14:00:00.000Z`, status: 'confirmed', time_zone: 'Europe/Madrid', answers: { empresa: 'Ñandú SAS' }, invited: true });
    expect((await sys.output('calendar_events.get', { id: booking.event_id }, key)).event).toMatchObject({ start: `${day}T14:00:00.000Z`, source: 'booking' });
    for (const deadline = Date.now() + EVENT_WAIT_MS; !messagesTo(email.toLowerCase()).some((m) => m.includes('METHOD:REQUEST')) && Date.now() < deadline;) await new Promise((r) => setTimeout(r, 100));
    expect(messagesTo(email.toLowerCase()).some((m) => m.includes('METHOD:REQUEST'))).toBe(true);

    // The second visitor picks the same slot on the page loaded before: refused, nothing booked.
    await late.check(`input[name=inicio][value="${day}T14:00:00.000Z"]`);
    await late.fill('#nombre', 'Pedro Gómez');
    await late.fill('#correo', uniqueAddress('pedro@cliente.example'));
    await late.fill('#p-empresa', 'Gómez Ltda');
    const [refused] = await Promise.all([late.waitForNavigation(), late.click('button:has-text("Reservar")')]);
    expect(refused?.status()).toBe(409);
    expect(await late.locator('[role=alert]').textContent()).toContain('Ese horario ya no está disponible');
    expect(await late.inputValue('#nombre')).toBe('Pedro Gómez'); // what was typed is kept
    expect(await late.locator(`input[name=inicio][value="${day}T14:00:00.000Z"]`).count()).toBe(0); // no longer offered
    expect(await axeProblems(late)).toEqual([]);
    await late.screenshot({ path: path.join(shots, 'booking-page-taken.png'), fullPage: true });
    expect((await sys.output('bookings.list', { status: 'confirmed' }, key)).rows).toHaveLength(1);
    // The one console line allowed: Chromium reporting the 409 answer itself.
    expect(problems.filter((p) => !p.includes('status of 409'))).toEqual([]);
  });

  it('refuses a missing answer with its message and books nothing; an unknown page is 404; posts past the limit are 429', async () => {
    const day = nextWeekday();
    // This visitor's own loopback address (the limit counts per address; the browser's posts above came from another).
    const visitor = new Agent({ localAddress: `127.${40 + (process.pid % 50)}.${Math.floor(Math.random() * 250)}.9` });
    const post = async (body: Record<string, string>) => {
      const res = await fetchFrom(`${sys.gatewayUrl}/book/${slug}/diagnostico`, { method: 'POST', dispatcher: visitor, headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(body).toString() });
      return { status: res.status, retryAfter: res.headers.get('retry-after'), text: () => res.text() };
    };
    const ficha = await formToken(`${sys.gatewayUrl}/book/${slug}/diagnostico`);
    const missing = await post({ inicio: `${day}T15:00:00.000Z`, nombre: 'Sin empresa', correo: 'sin@cliente.example', zona: 'America/Bogota', ficha });
    expect(missing.status).toBe(400);
    expect(await missing.text()).toContain('Responde «Empresa».');
    expect((await sys.output('bookings.list', { search: 'sin@cliente.example' }, key)).rows).toEqual([]);
    expect((await fetch(`${sys.gatewayUrl}/book/${slug}/no-existe`)).status).toBe(404);
    expect((await fetch(`${sys.gatewayUrl}/book/nadie-${Date.now()}/diagnostico`)).status).toBe(404);
    // 10 posts per address per 10 minutes (BOOKING_FORM_RATE_LIMIT): the 11th is refused before it is read or forwarded.
    const statuses: number[] = [];
    for (let i = 0; i < 9; i++) statuses.push((await post({ nombre: 'x' })).status);
    expect(statuses).toEqual(Array(9).fill(400));
    const over = await post({ nombre: 'x' });
    expect(over.status).toBe(429);
    expect(Number(over.retryAfter)).toBeGreaterThan(0);
    expect(await over.text()).toContain('Demasiados envíos');
    await visitor.close();
  });

  it('books through the pipeline as the page\'s visitor: one form sent twice books once with one ledger entry, and a policy holding bookings.create holds the page\'s bookings too', async () => {
    const day = nextWeekday();
    const url = `${sys.gatewayUrl}/book/${slug}/diagnostico`;
    const visitor = new Agent({ localAddress: `127.${100 + (process.pid % 50)}.${Math.floor(Math.random() * 250)}.7` });
    const post = async (body: Record<string, string>) => {
      const res = await fetchFrom(url, { method: 'POST', dispatcher: visitor, headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(body).toString() });
      return { status: res.status, text: await res.text() };
    };
    const email = uniqueAddress('doble@cliente.example').toLowerCase();
    // 11:00 Bogotá = 16:00Z; the form as the page gave it, sent twice at once (a double click, a resent post).
    const form = { inicio: `${day}T16:00:00.000Z`, nombre: 'Doble Clic', correo: email, zona: 'America/Bogota', p_empresa: 'Clic SAS', ficha: await formToken(url) };
    const [a, b] = await Promise.all([post(form), post(form)]);
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(a.text).toContain('Reserva confirmada');
    expect(b.text).toContain('Reserva confirmada');
    const booked = (await sys.output('bookings.list', { search: email }, key)).rows;
    expect(booked).toHaveLength(1);
    // The call is bookings.create by the page's visitor, ledgered once (a replay is marked as such, never a second action).
    const entries = (await sys.output('ledger.list', { tool: 'bookings.create', limit: 50 }, key)).rows.filter((e: any) => e.actor.type === 'visitor');
    const acted = entries.filter((e: any) => e.outcome === 'ok' && !e.replayed && e.idempotency_key === `booking-form:${form.ficha}`);
    expect(acted).toHaveLength(1);
    expect(acted[0]).toMatchObject({ actor: { type: 'visitor' }, risk: 'external' });
    expect(entries.filter((e: any) => e.idempotency_key === `booking-form:${form.ficha}` && !e.replayed)).toHaveLength(1);

    // A workspace policy that holds bookings.create holds the page's booking: nothing booked until a person approves.
    const policy = (await sys.output('policies.create', { name: 'Reservas con aprobación', match: { tools: ['bookings.create'] }, effect: 'hold', priority: 10 }, key)).policy;
    try {
      const heldEmail = uniqueAddress('espera@cliente.example').toLowerCase();
      const held = await post({ inicio: `${day}T15:00:00.000Z`, nombre: 'En Espera', correo: heldEmail, zona: 'America/Bogota', p_empresa: 'Espera SAS', ficha: await formToken(url) });
      expect(held.status).toBe(202);
      expect(held.text).toContain('Solicitud recibida');
      expect((await sys.output('bookings.list', { search: heldEmail }, key)).rows).toEqual([]);
      const approvals = (await sys.output('approvals.list', { status: 'pending' }, key)).rows.filter((r: any) => r.tool === 'bookings.create');
      expect(approvals).toHaveLength(1);
      expect(approvals[0].requested_by).toMatchObject({ type: 'visitor' });
    } finally {
      await sys.output('policies.delete', { id: policy.id }, key);
    }
    await visitor.close();
  });

  it('shows a workspace its slug and the address of each booking page (workspace.get); a caller who may not read booking types gets the rest', async () => {
    const { workspace } = await sys.output('workspace.get', {}, key);
    expect(workspace).toMatchObject({ name: 'Consultora Ñandú S.A.S.', country: 'CO', slug });
    expect(workspace.booking_page_base).toMatch(new RegExp(`^https?://[^/]+/book/${slug}/$`));
    expect(workspace.booking_pages).toEqual([{ type_id: expect.stringMatching(/^bkt_/), name: 'Diagnóstico inicial', slug: 'diagnostico', url: `${workspace.booking_page_base}diagnostico` }]);
    // The address answers the page (the gateway's public address here is the test's gateway).
    const page = await fetch(`${sys.gatewayUrl}${new URL(workspace.booking_pages[0].url).pathname}`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<h1>Diagnóstico inicial</h1>');
    const narrow = (await sys.output('api_keys.create', { name: 'solo facturas', role: 'member', patterns: ['workspace.%', 'invoices.%'] }, key)).api_key;
    expect((await sys.output('workspace.get', {}, narrow)).workspace).toMatchObject({ slug, booking_pages: null });
  });

  it('gives every workspace a unique slug: derived from the name (accents dropped, a suffix when taken), chosen and refused when taken or malformed, and backfilled for older ones', async () => {
    const name = `Panadería La Espiga ${randomBytes(3).toString('hex')}`;
    const base = `panaderia-la-espiga-${name.slice(-6)}`;
    const a = await sys.workspace(name);
    const b = await sys.workspace(name);
    expect(await sys.identity.slugOf(a.workspace_id)).toBe(base);
    expect(await sys.identity.slugOf(b.workspace_id)).toMatch(new RegExp(`^${base}-[0-9a-f]{6}$`));
    const chosen = `mi-consultora-${randomBytes(3).toString('hex')}`;
    const c = await sys.identity.createWorkspace({ name: 'Otra', ownerEmail: 'duena@otra.example', slug: chosen });
    expect(await sys.identity.workspaceBySlug(chosen)).toEqual({ id: c.workspace_id, name: 'Otra', country: 'CO' });
    await expect(sys.identity.createWorkspace({ name: 'Tercera', ownerEmail: 'x@otra.example', slug: chosen })).rejects.toMatchObject({ code: 'conflict', field: '/slug' });
    await expect(sys.identity.createWorkspace({ name: 'Tercera', ownerEmail: 'x@otra.example', slug: 'Con Espacios' })).rejects.toMatchObject({ code: 'invalid_input', field: '/slug' });
    // Workspaces opened before slugs existed (no slug stored) get one at start-up.
    const conn = await mongoose.createConnection(process.env.MONGO_URL!, { dbName: sys.gatewayDb }).asPromise();
    try {
      await conn.collection('workspaces').updateMany({ _id: { $in: [a.workspace_id, b.workspace_id] } as never }, { $unset: { slug: '' } });
      expect(await sys.identity.slugOf(a.workspace_id)).toBeNull();
      expect(await sys.identity.backfillSlugs()).toBeGreaterThanOrEqual(2);
      const [sa, sb] = [await sys.identity.slugOf(a.workspace_id), await sys.identity.slugOf(b.workspace_id)];
      expect(sa).toMatch(new RegExp(`^${base}(-[0-9a-f]{6})?$`));
      expect(sb).toMatch(new RegExp(`^${base}(-[0-9a-f]{6})?$`));
      expect(sa).not.toBe(sb);
      expect(await sys.identity.backfillSlugs()).toBe(0);
    } finally {
      await conn.close();
    }
  });
});
