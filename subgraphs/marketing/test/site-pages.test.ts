import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSubgraph, testPrincipal, type TestSubgraph } from '@cuadra/shared/testing';
import type { Principal } from '@cuadra/shared';
import { startInvoices } from '../../invoices/test/setup.ts';
import { createServer, name } from '../src/server.ts';

// A site's pages edited one at a time (sites.pages.*, issue 36): each change a new draft revision
// (compare-and-set: parallel editors lose nothing, a stale one is told), bounds and hostile blocks
// refused at their field, published versions untouched by the draft. And the list of items from
// finance's catalog, read through the graph as the site's workspace: the served page shows each
// item's current name and price with VAT; an archived item is left out, a deleted one or a finance
// that does not answer never breaks the page. Finance (with crm) runs beside marketing; the public
// page is read from marketing's own /public/s/… (what the gateway forwards /s/… to).
let finance: TestSubgraph | undefined;
let marketing: TestSubgraph;
const owner = testPrincipal({ country: 'CO' });

beforeAll(async () => {
  finance = await startInvoices();
  marketing = await startTestSubgraph(name, createServer, { peers: { invoices: finance } });
});
afterAll(async () => {
  await marketing?.close();
  await finance?.close();
});

const out = (tool: string, input: unknown, p: Principal = owner) => marketing.output(tool, input, p);
async function refused(tool: string, input: unknown, p: Principal = owner) {
  const r = await marketing.call(tool, input, p);
  return { status: r.httpStatus, code: r.code, field: r.field };
}
const served = async (slug: string, path = '/') => {
  const res = await fetch(`${marketing.url}/public/s/${slug}${path}`);
  return { status: res.status, cache: res.headers.get('cache-control'), html: await res.text() };
};
const paths = async (siteId: string) => ((await out('sites.pages.list', { site_id: siteId })).rows as { path: string }[]).map((p) => p.path);

describe('sites.pages.*', () => {
  it('adds, changes, orders and removes pages one at a time; each change is a revision; published versions keep what they published', async () => {
    const site = (await out('sites.create', { slug: 'paginas-una-a-una', name: 'Tostadores', pages: [{ path: '/', title: 'Inicio', blocks: [{ type: 'text', text: 'Primera versión' }] }] })).site;
    expect(site.revision).toBe(0);
    const made = await out('sites.pages.create', { site_id: site.id, path: '/precios', title: 'Precios', blocks: [{ type: 'heading', text: 'Lo que cuesta' }] });
    expect(made).toEqual({ page: { path: '/precios', title: 'Precios', position: 2, blocks: [{ type: 'heading', text: 'Lo que cuesta' }] }, revision: 1 });
    // A path names one page of the site: the same one again is refused, and so is a move onto it.
    expect(await refused('sites.pages.create', { site_id: site.id, path: '/precios', title: 'Otra' })).toEqual({ status: 409, code: 'conflict', field: undefined });
    expect(await refused('sites.pages.update', { site_id: site.id, path: '/', new_path: '/precios' })).toEqual({ status: 409, code: 'conflict', field: undefined });
    expect(await refused('sites.pages.update', { site_id: site.id, path: '/nada', title: 'X' })).toEqual({ status: 404, code: 'not_found', field: undefined });
    expect((await out('sites.pages.create', { site_id: site.id, path: '/contacto', title: 'Contacto', position: 1 })).page.position).toBe(1);
    expect(await paths(site.id)).toEqual(['/contacto', '/', '/precios']);
    expect((await out('sites.publish', { id: site.id })).site).toMatchObject({ published_version: 1, revision: 2 });

    // The draft moves on; visitors see version 1 until the next publish.
    const changed = await out('sites.pages.update', { site_id: site.id, path: '/', title: 'Bienvenidos', blocks: [{ type: 'text', text: 'Segunda versión' }] });
    expect(changed).toEqual({ page: { path: '/', title: 'Bienvenidos', position: 2, blocks: [{ type: 'text', text: 'Segunda versión' }] }, revision: 3 });
    expect((await out('sites.pages.update', { site_id: site.id, path: '/precios', new_path: '/tarifas' })).page).toMatchObject({ path: '/tarifas', title: 'Precios', position: 3 });
    expect((await out('sites.pages.reorder', { site_id: site.id, paths: ['/', '/tarifas', '/contacto'] })).rows.map((p: { path: string; position: number }) => `${p.position}${p.path}`)).toEqual(['1/', '2/tarifas', '3/contacto']);
    expect(await refused('sites.pages.reorder', { site_id: site.id, paths: ['/', '/tarifas'] })).toEqual({ status: 422, code: 'invalid_input', field: '/paths' });
    expect(await refused('sites.pages.reorder', { site_id: site.id, paths: ['/', '/tarifas', '/otra'] })).toEqual({ status: 422, code: 'invalid_input', field: '/paths/2' });
    expect(await out('sites.pages.delete', { site_id: site.id, path: '/contacto' })).toEqual({ deleted: '/contacto', revision: 6 });
    const v1 = await served('paginas-una-a-una');
    expect(v1.html).toContain('Primera versión');
    expect((await served('paginas-una-a-una', '/contacto')).status).toBe(200);
    expect((await served('paginas-una-a-una', '/tarifas')).status).toBe(404);

    expect((await out('sites.publish', { id: site.id })).site).toMatchObject({ published_version: 2, versions: 2 });
    expect((await served('paginas-una-a-una')).html).toContain('Segunda versión');
    expect((await served('paginas-una-a-una', '/contacto')).status).toBe(404);
    expect((await served('paginas-una-a-una', '/tarifas')).status).toBe(200);
    await out('sites.rollback', { id: site.id, version: 1 });
    expect((await served('paginas-una-a-una')).html).toContain('Primera versión');
    expect((await served('paginas-una-a-una', '/contacto')).status).toBe(200);
    // A rollback leaves the draft as it was.
    expect(await paths(site.id)).toEqual(['/', '/tarifas']);
    // A site keeps one page at least; another workspace finds no site.
    await out('sites.pages.delete', { site_id: site.id, path: '/tarifas' });
    expect(await refused('sites.pages.delete', { site_id: site.id, path: '/' })).toEqual({ status: 409, code: 'conflict', field: undefined });
    expect(await refused('sites.pages.list', { site_id: site.id }, testPrincipal())).toEqual({ status: 404, code: 'not_found', field: undefined });
    expect(await refused('sites.pages.create', { site_id: site.id, path: '/ajena', title: 'X' }, testPrincipal())).toEqual({ status: 404, code: 'not_found', field: undefined });
  });

  it('loses no parallel change, and tells an editor whose revision is stale (nothing changed)', async () => {
    const site = (await out('sites.create', { slug: 'editores-a-la-vez', name: 'A la vez' })).site;
    // Eight editors add eight pages at once: every one lands, the revision counts eight changes.
    const made = await Promise.all(Array.from({ length: 8 }, (_, i) => marketing.call('sites.pages.create', { site_id: site.id, path: `/p${i}`, title: `P${i}` }, owner)));
    expect(made.map((r) => r.ok)).toEqual(Array(8).fill(true));
    const list = await out('sites.pages.list', { site_id: site.id });
    expect(list.revision).toBe(8);
    expect(list.rows.map((p: { path: string }) => p.path).sort()).toEqual(['/', ...Array.from({ length: 8 }, (_, i) => `/p${i}`)].sort());
    // Twenty creates of one path and seven moves of other pages onto it, all at once: whatever the interleaving,
    // exactly one lands (one page at the path, one revision more) and the 26 others are 409 with nothing written.
    const racers = [
      ...Array.from({ length: 20 }, (_, n) => () => marketing.call('sites.pages.create', { site_id: site.id, path: '/doble', title: `Doble ${n}` }, owner)),
      ...Array.from({ length: 7 }, (_, n) => () => marketing.call('sites.pages.update', { site_id: site.id, path: `/p${n + 1}`, new_path: '/doble' }, owner)),
    ];
    const raced = await Promise.all(racers.map((go) => go()));
    const after = await out('sites.pages.list', { site_id: site.id });
    const outcomes = raced.map((r) => (r.ok ? 'ok' : `${r.httpStatus} ${r.code}`));
    expect(outcomes.filter((o) => o === 'ok'), JSON.stringify([outcomes, after])).toHaveLength(1);
    expect(outcomes.filter((o) => o === '409 conflict')).toHaveLength(26);
    expect(after.rows.filter((p: { path: string }) => p.path === '/doble')).toHaveLength(1);
    expect(after.revision).toBe(9);
    expect(after.rows).toHaveLength(outcomes.findIndex((o) => o === 'ok') < 20 ? 10 : 9);
    // An editor who read revision 3 changes nothing now.
    expect(await refused('sites.pages.update', { site_id: site.id, path: '/p0', title: 'Tarde', revision: 3 })).toEqual({ status: 409, code: 'conflict', field: undefined });
    const now = (await out('sites.pages.list', { site_id: site.id })).revision;
    expect(now).toBe(9);
    expect((await out('sites.pages.update', { site_id: site.id, path: '/p0', title: 'A tiempo', revision: now })).revision).toBe(10);
  });

  it('refuses hostile blocks and what passes a site\'s bounds at their field', async () => {
    const site = (await out('sites.create', { slug: 'hostil', name: 'Hostil' })).site;
    const page = (blocks: unknown[], path = '/x') => ({ site_id: site.id, path, title: 'X', blocks });
    const cases: [unknown, string][] = [
      [page([{ type: 'image', url: 'javascript:alert(1)', alt: 'x' }]), '/blocks/0/url'],
      [page([{ type: 'image', url: 'data:image/svg+xml,<svg onload=alert(1)>', alt: 'x' }]), '/blocks/0/url'],
      [page([{ type: 'image', url: 'https://a.example/x.png" onerror="alert(1)', alt: 'x' }]), '/blocks/0/url'],
      [page([{ type: 'text', text: 'x', style: 'background:url(javascript:alert(1));width:expression(alert(1))' }]), '/blocks/0/style'],
      [page([{ type: 'heading', text: 'x', onmouseover: 'alert(1)' }]), '/blocks/0/onmouseover'],
      [page([{ type: 'html', text: '<script>alert(1)</script>' }]), '/blocks/0/type'],
      [page([{ type: 'list', items: [{ title: 'x', item_id: 'itm_x' }] }]), '/blocks/0/items/0/title'],
      [page([], '/../etc'), '/path'],
      [page([], '/Mayus'), '/path'],
      [{ ...page([]), title: '' }, '/title'],
      [page(Array(101).fill({ type: 'text', text: 'x' })), '/blocks'],
    ];
    for (const [input, field] of cases) expect({ input, ...(await refused('sites.pages.create', input)) }).toEqual({ input, status: 422, code: 'invalid_input', field });
    // At most 30 pages: the 31st is refused.
    await out('sites.update', { id: site.id, pages: Array.from({ length: 30 }, (_, i) => ({ path: i ? `/p${i}` : '/', title: `P${i}`, blocks: [] })) });
    expect(await refused('sites.pages.create', { site_id: site.id, path: '/p30', title: 'P30' })).toEqual({ status: 409, code: 'conflict', field: undefined });
    // At most 1,000,000 bytes of pages: a page of 100 blocks of 5,000 characters fits, two do not.
    const big = Array(100).fill({ type: 'text', text: 'ñ'.repeat(2500) + 'a'.repeat(2500) });
    await out('sites.pages.update', { site_id: site.id, path: '/p1', blocks: big });
    expect(await refused('sites.pages.update', { site_id: site.id, path: '/p2', blocks: big })).toEqual({ status: 422, code: 'invalid_input', field: '/blocks' });
    expect((await out('sites.pages.list', { site_id: site.id })).rows[2].blocks).toEqual([]);
  });
});

describe('a list of items from the catalog', () => {
  /** An item of the workspace's catalog, made in finance; its id. */
  const item = async (input: Record<string, unknown>, p: Principal = owner) => {
    const r = await finance!.call('items.create', input, p);
    if (!r.ok) throw new Error(`items.create: ${r.code} ${r.field} ${r.message}`);
    return r.output.item.id as string;
  };

  it('shows each item\'s current name and price with VAT as finance states it; an archived one disappears, a deleted one or finance away never breaks the page', async () => {
    // Café de Huila 500 g: COP 21.000,00 = 2,100,000 minor units; VAT 19 %: 2,100,000 × 0.19 = 399,000 → 2,499,000 = $ 24.990.
    const cafe = await item({ name: 'Café de Huila 500 g', kind: 'product', price: { amount: 2_100_000, currency: 'COP' }, tax_rate_ppm: 190_000 });
    // Taza de cerámica: 1,234,567 × 0.19 = 234,567.73 → rounded once to 234,568 → 1,469,135 = $ 14.691,35.
    const taza = await item({ name: 'Taza de cerámica <b>', kind: 'product', price: { amount: 1_234_567, currency: 'COP' }, tax_rate_ppm: 190_000 });
    // Cata guiada: 5,000,000 × 0.05 = 250,000 → 5,250,000 = $ 52.500.
    const cata = await item({ name: 'Cata guiada', kind: 'service', price: { amount: 5_000_000, currency: 'COP' }, tax_rate_ppm: 50_000 });
    const other = await item({ name: 'De otro espacio', kind: 'product', price: { amount: 100, currency: 'COP' }, tax_rate_ppm: 0 }, testPrincipal({ country: 'CO' }));

    const site = (await out('sites.create', { slug: 'tienda-cafe', name: 'Tienda de café' })).site;
    // A reference to no item of the workspace (another's, made up) is refused at it (CONTRACT §10), nothing written.
    const list = (ids: string[]) => [{ type: 'list', title: 'Nuestros productos', items: [{ title: 'Envío gratis', text: 'en Neiva' }, ...ids.map((item_id) => ({ item_id }))] }];
    expect(await refused('sites.pages.create', { site_id: site.id, path: '/tienda', title: 'Tienda', blocks: list([cafe, other]) })).toEqual({ status: 422, code: 'invalid_input', field: '/blocks/0/items/2/item_id' });
    expect(await refused('sites.pages.update', { site_id: site.id, path: '/', blocks: list(['itm_inventado']) })).toEqual({ status: 422, code: 'invalid_input', field: '/blocks/0/items/1/item_id' });
    expect(await refused('sites.update', { id: site.id, pages: [{ path: '/', title: 'Inicio', blocks: list([cafe, taza, 'itm_inventado']) }] })).toEqual({ status: 422, code: 'invalid_input', field: '/pages/0/blocks/0/items/3/item_id' });
    expect((await out('sites.pages.list', { site_id: site.id })).revision).toBe(0);

    await out('sites.pages.update', { site_id: site.id, path: '/', title: 'Tienda', blocks: list([cafe, taza, cata]) });
    await out('sites.publish', { id: site.id });
    const entries = async () => {
      const page = await served('tienda-cafe');
      expect(page.status).toBe(200);
      return { cache: page.cache, entries: [...page.html.matchAll(/<li>(.*?)<\/li>/g)].map((m) => m[1].replace(/<[^>]+>/g, '')) };
    };
    expect(await entries()).toEqual({ cache: 'public, max-age=60', entries: ['Envío gratis — en Neiva', 'Café de Huila 500 g — $ 24.990 IVA incluido', 'Taza de cerámica &lt;b&gt; — $ 14.691,35 IVA incluido', 'Cata guiada — $ 52.500 IVA incluido'] });

    // Current figures without publishing again: finance's new price (2,300,000 × 1.19 = 2,737,000 = $ 27.370).
    expect((await finance!.call('items.update', { id: cafe, price: { amount: 2_300_000, currency: 'COP' } }, owner)).ok).toBe(true);
    // Archived: left out.
    expect((await finance!.call('items.archive', { id: cata }, owner)).ok).toBe(true);
    // Deleted from finance's records altogether: left out, the page still served.
    await finance!.db.collection('items').deleteOne({ _id: taza as never });
    expect((await entries()).entries).toEqual(['Envío gratis — en Neiva', 'Café de Huila 500 g — $ 27.370 IVA incluido']);

    // Finance not answering: the page is served with its own entries, and kept nowhere (no-store).
    await finance!.close();
    finance = undefined;
    expect(await entries()).toEqual({ cache: 'no-store', entries: ['Envío gratis — en Neiva'] });
    // A change naming an item now cannot be checked: refused as unavailable (503 through the gateway), nothing written.
    const before = (await out('sites.pages.list', { site_id: site.id })).revision;
    expect(await refused('sites.pages.create', { site_id: site.id, path: '/mas', title: 'Más', blocks: list([cafe]) })).toMatchObject({ code: 'unavailable' });
    expect((await out('sites.pages.list', { site_id: site.id })).revision).toBe(before);
  });
});
