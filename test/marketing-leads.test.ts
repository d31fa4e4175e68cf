import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type { BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openBrowser, SHOTS } from './helpers/browser.ts';
import { startTestSystem, type TestSystem } from './helpers/system.ts';
import { EVENT_WAIT_MS } from './helpers/until.ts';

/*
 * A site's lead becomes a crm party and deal (issue 36, "a site published with a lead form that
 * creates a party and a deal"): the form sent in Chromium, deals.create_from_lead through the
 * pipeline, once per lead however often and however concurrently it is called, and the visitor's
 * consent recorded on the party by marketing.
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

// Site addresses and e-mails are unique per run (the system may be shared with other files).
const run = randomBytes(3).toString('hex');
const FORM = { type: 'form', title: 'Escríbenos', fields: ['name', 'email', 'phone', 'message'], consent_text: 'Autorizo a Taller Norte SAS a tratar mis datos y a enviarme correos comerciales (Ley 1581 de 2012).', submit_label: 'Enviar' };

/** Sends the site's form as a browser without script would (the form is block 0 of the home page). */
async function submit(slug: string, fields: Record<string, string>) {
  const res = await fetch(`${sys.gatewayUrl}/s/${slug}/`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ form: '0', ...fields }).toString() });
  expect(res.status).toBe(200);
}

async function leadOf(siteId: string, email: string) {
  const rows = (await ok('sites.leads', { id: siteId })).rows as { id: string; email: string }[];
  return rows.filter((r) => r.email === email);
}

async function partiesWith(email: string) {
  return ((await ok('parties.list', { search: email, limit: 100 })).rows as { id: string; email: string | null }[]).filter((p) => p.email === email);
}

async function dealsOf(partyId: string) {
  return (await ok('deals.list', { party_id: partyId, limit: 100 })).rows as { id: string; pipeline_id: string; party_id: string; tags: string[]; title: string }[];
}

let site: { id: string; slug: string };
let pipeline: { id: string; key: string };

beforeAll(async () => {
  sys = await startTestSystem('leads');
  ({ api_key: key, workspace_id: workspaceId } = await sys.workspace('Taller Norte SAS'));
  // Two pipelines: the site's leads go to the second, not the default one.
  await ok('pipelines.create', { name: 'Ventas', key: 'ventas', stages: [{ name: 'Nuevo', kind: 'open' }, { name: 'Ganado', kind: 'won' }] });
  pipeline = (await ok('pipelines.create', { name: 'Contactos web', key: 'web', stages: [{ name: 'Por contactar', kind: 'open' }, { name: 'Ganado', kind: 'won' }] })).pipeline;
  site = (await ok('sites.create', { slug: `taller-norte-${run}`, name: 'Taller Norte', lead_pipeline: 'web', pages: [{ path: '/', title: 'Taller Norte', blocks: [FORM] }] })).site;
  expect(site).toMatchObject({ lead_pipeline: 'web' });
  await ok('sites.publish', { id: site.id });
  ({ context, close: closeBrowser } = await openBrowser({ width: 900, height: 900 }));
});

afterAll(async () => {
  await closeBrowser?.();
  await sys?.stop();
});

describe('a site lead becomes a party and a deal', () => {
  it('a form sent in Chromium ends as one party and one deal in the site\'s pipeline, with the consent recorded on the party; again, it answers the same', async () => {
    const email = `camila.${run}@ejemplo.co`;
    const page = await context.newPage();
    await page.goto(`${sys.gatewayUrl}/s/${site.slug}/`);
    await page.getByLabel('Nombre').fill('Camila Rojas');
    await page.getByLabel('Correo electrónico').fill(email);
    await page.getByLabel('Teléfono').fill('+57 310 555 0101');
    await page.getByLabel('Mensaje').fill('Quiero cotizar 40 sillas.');
    await page.getByLabel(/Autorizo a Taller Norte/).check();
    await Promise.all([page.waitForURL(`${sys.gatewayUrl}/s/${site.slug}/`), page.getByRole('button', { name: 'Enviar' }).click()]);
    expect(await page.locator('h1').innerText()).toBe('Gracias');
    await page.screenshot({ path: path.join(SHOTS, 'site-lead-sent.png'), fullPage: true });
    await page.close();

    const [lead] = await leadOf(site.id, email);
    expect(lead).toBeDefined();
    const first = await ok('deals.create_from_lead', { lead_id: lead.id });
    expect(first).toMatchObject({
      created: true, party_created: true,
      party: { name: 'Camila Rojas', kind: 'customer', email, phone: '+57 310 555 0101', tags: ['from_site'] },
      deal: { title: 'Camila Rojas · Taller Norte', pipeline_id: pipeline.id, status: 'open', tags: ['from_site'] },
    });
    expect(first.deal.party_id).toBe(first.party.id);
    // Called again: the same deal and party, nothing new.
    const again = await ok('deals.create_from_lead', { lead_id: lead.id });
    expect(again).toMatchObject({ created: false, party_created: false, deal: { id: first.deal.id }, party: { id: first.party.id } });
    expect(await partiesWith(email)).toHaveLength(1);
    expect((await dealsOf(first.party.id)).map((d) => d.id)).toEqual([first.deal.id]);

    // Marketing records the consent the visitor gave on the form, on the party crm made, with the form's evidence.
    let consent: any;
    for (const deadline = Date.now() + EVENT_WAIT_MS; !consent && Date.now() < deadline;) {
      consent = (await ok('consents.list', { party_id: first.party.id })).rows[0];
      if (!consent) await new Promise((r) => setTimeout(r, 200));
    }
    expect(consent).toMatchObject({ party_id: first.party.id, channel: 'email', status: 'granted', address: email, evidence: { source: 'site_form', text: FORM.consent_text, reference: lead.id, recorded_by: 'public' } });
    expect(consent.evidence.user_agent).toMatch(/Chrome/);
    expect(consent.history).toHaveLength(1);

    // Both calls are in the ledger, as the key that made them.
    const entries = (await ok('ledger.list', { tool: 'deals.create_from_lead', limit: 10 })).rows as { outcome: string; actor: { type: string } }[];
    expect(entries.map((e) => e.outcome)).toEqual(['ok', 'ok']);
    expect(entries.every((e) => e.actor.type === 'api_key')).toBe(true);
  });

  it('eight concurrent calls for one lead make one party and one deal; a lead without consent gets no consent', async () => {
    const email = `mateo.${run}@ejemplo.co`;
    await submit(site.slug, { name: 'Mateo Díaz', email, message: 'Hola' }); // the consent box left unticked
    const [lead] = await leadOf(site.id, email);
    const answers = await Promise.all(Array.from({ length: 8 }, () => sys.invoke('deals.create_from_lead', { lead_id: lead.id }, key)));
    expect(answers.map((a) => a.status)).toEqual(Array(8).fill(200));
    expect(answers.filter((a) => a.body.output.created)).toHaveLength(1);
    expect(new Set(answers.map((a) => a.body.output.deal.id)).size).toBe(1);
    expect(new Set(answers.map((a) => a.body.output.party.id)).size).toBe(1);
    const [party] = await partiesWith(email);
    expect(await partiesWith(email)).toHaveLength(1);
    expect(await dealsOf(party.id)).toHaveLength(1);
    // The board counts the lead's deal once (its column's counter, kept on write).
    const board = (await ok('deals.list', { pipeline: 'web', search: 'Mateo', limit: 100 })).rows;
    expect(board).toHaveLength(1);
    await new Promise((r) => setTimeout(r, 300));
    expect((await ok('consents.list', { party_id: party.id })).rows).toEqual([]);
  });

  it('a second lead of the same visitor, and a party already holding the e-mail (what a crash between the two steps leaves), are reused', async () => {
    const email = `sofia.${run}@ejemplo.co`;
    const known = (await ok('parties.create', { name: 'Sofía Peña (cliente)', kind: 'customer', email })).party;
    await submit(site.slug, { name: 'Sofía', email, consent: 'yes' });
    await submit(site.slug, { name: 'Sofía Peña', email, message: 'Otra cotización' });
    const leads = await leadOf(site.id, email);
    expect(leads).toHaveLength(2);
    const a = await ok('deals.create_from_lead', { lead_id: leads[0].id });
    const b = await ok('deals.create_from_lead', { lead_id: leads[1].id });
    expect([a.party.id, b.party.id]).toEqual([known.id, known.id]);
    expect([a.party_created, b.party_created, a.created, b.created]).toEqual([false, false, true, true]);
    expect(a.deal.id).not.toBe(b.deal.id);
    expect(await partiesWith(email)).toHaveLength(1);
    expect(await dealsOf(known.id)).toHaveLength(2);

    // Two leads of a new visitor sent at once make one party between them.
    const twin = `tomas.${run}@ejemplo.co`;
    await submit(site.slug, { name: 'Tomás', email: twin });
    await submit(site.slug, { name: 'Tomás', email: twin });
    const twins = await leadOf(site.id, twin);
    const made = await Promise.all(twins.map((l) => ok('deals.create_from_lead', { lead_id: l.id })));
    expect(made[0].party.id).toBe(made[1].party.id);
    expect(await partiesWith(twin)).toHaveLength(1);
    expect(await dealsOf(made[0].party.id)).toHaveLength(2);
  });

  it('refuses at the lead: unknown, another workspace\'s, malformed; a site pointing at a missing pipeline creates nothing', async () => {
    const email = `ajeno.${run}@ejemplo.co`;
    await submit(site.slug, { name: 'Ajeno', email });
    const [lead] = await leadOf(site.id, email);
    const other = (await sys.workspace('Otra Empresa SAS')).api_key;
    const foreign = await sys.invoke('deals.create_from_lead', { lead_id: lead.id }, other);
    expect({ status: foreign.status, code: foreign.body.code }).toEqual({ status: 404, code: 'not_found' });
    const unknown = await sys.invoke('deals.create_from_lead', { lead_id: 'lead_nadaNadaNada' }, key);
    expect({ status: unknown.status, code: unknown.body.code }).toEqual({ status: 404, code: 'not_found' });
    const malformed = await sys.invoke('deals.create_from_lead', { lead_id: 'pty_123' }, key);
    expect(malformed.body).toMatchObject({ code: 'invalid_input', field: '/lead_id' });
    // A viewer reaches no write.
    const viewer = (await sys.key(workspaceId, 'viewer')).api_key;
    expect((await sys.invoke('deals.create_from_lead', { lead_id: lead.id }, viewer)).body.code).toBe('policy_denied');

    await ok('sites.update', { id: site.id, lead_pipeline: 'no-existe' });
    const missing = await sys.invoke('deals.create_from_lead', { lead_id: lead.id }, key);
    expect(missing.status).toBe(409);
    expect(missing.body).toMatchObject({ code: 'conflict', error: expect.stringContaining('"no-existe"') });
    expect(await partiesWith(email)).toEqual([]);
    // Back to the default pipeline (null): the lead goes there.
    await ok('sites.update', { id: site.id, lead_pipeline: null });
    const made = await ok('deals.create_from_lead', { lead_id: lead.id });
    const ventas = ((await ok('pipelines.list', {})).rows as { id: string; key: string }[]).find((p) => p.key === 'ventas')!;
    expect(made.deal.pipeline_id).toBe(ventas.id);
    expect(made.party_created).toBe(true);
  });
});
