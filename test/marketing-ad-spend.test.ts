import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSystem, type TestSystem } from './helpers/system.ts';

/*
 * Ad spend (issue 36): Meta and Google Ads CSV exports imported into marketing by campaign and day,
 * then booked by finance as a vendor's bill whose lines carry each campaign's finance tag, so the
 * profitability metric counts the spend under the campaign. Each figure is worked out by hand below.
 */

let sys: TestSystem;
let key: string;

/** A tool's output, as the workspace's key unless another is given (sys.output throws on any other status). */
function ok(tool: string, input: unknown, k = key) {
  return sys.output(tool, input, k);
}

const META_EXPORT = [
  '"Campaign name","Day","Amount spent (COP)","Impressions","Link clicks"',
  '"Navidad 2026","2026-11-02","150000.50","12000","340"',
  '"Navidad 2026","2026-11-03","99999.99","9000","210"',
  '"Marca","2026-11-02","50000","4000","80"',
].join('\n');

// Google Ads: the report's title and range first, Spanish headers, thousands separators, a closing total row.
const GOOGLE_EXPORT = [
  'Informe de rendimiento de la campaña',
  '"1 de noviembre de 2026 - 30 de noviembre de 2026"',
  'Campaña,Día,Código de moneda,Costo,Impr.,Clics',
  'Búsqueda Navidad,2026-11-02,COP,"1,234,567.80","1,000",50',
  'Total: cuenta,--,COP,"1,234,567.80","1,000",50',
].join('\n');

beforeAll(async () => {
  sys = await startTestSystem('adspend');
  key = (await sys.workspace('Pauta SAS')).api_key;
});

afterAll(async () => {
  await sys?.stop();
});

describe('ad accounts: spend imported from the platforms\' exports and booked as tagged expenses', () => {
  it('imports Meta and Google Ads exports by campaign and day, replaces a re-imported day instead of adding it, and refuses a bad file whole', async () => {
    const meta = (await ok('marketing_ad_accounts.connect', {
      name: 'Meta principal', platform: 'meta', external_id: 'act_123456', currency: 'COP',
      campaign_tags: [{ campaign: 'Navidad 2026', tags: { campana: 'navidad-2026' } }],
    })).account;
    const first = await ok('marketing_ad_accounts.import_spend', { account_id: meta.id, csv: META_EXPORT });
    // 150,000.50 + 99,999.99 + 50,000.00 = 300,000.49 COP = 30,000,049 centavos.
    expect(first).toMatchObject({ rows: 3, campaigns: 2, from: '2026-11-02', to: '2026-11-03', total: 30_000_049, currency: 'COP' });

    // The export of 3 November again, corrected to 100,000.00: the day is replaced, not added.
    const again = await ok('marketing_ad_accounts.import_spend', { account_id: meta.id, csv: '"Campaign name","Day","Amount spent (COP)"\n"navidad 2026 ","2026-11-03","100000.00"' });
    expect(again.total).toBe(10_000_000);
    const spend = await ok('marketing_ad_accounts.spend', { account_id: meta.id, from: '2026-11-01', to: '2026-11-30' });
    // Navidad: 150,000.50 + 100,000.00 = 250,000.50 → 25,000,050; Marca 5,000,000; total 30,000,050.
    expect(spend.total).toBe(30_000_050);
    expect(spend.campaigns.map((c: any) => [c.campaign, c.total, c.tags, c.days.map((d: any) => [d.day, d.amount])])).toEqual([
      ['Marca', 5_000_000, {}, [['2026-11-02', 5_000_000]]],
      // One campaign whatever case the second export wrote; shown with the name of its latest import.
      ['navidad 2026', 25_000_050, { campana: 'navidad-2026' }, [['2026-11-02', 15_000_050], ['2026-11-03', 10_000_000]]],
    ]);
    expect(spend.campaigns[1].days[0]).toMatchObject({ impressions: 12000, clicks: 340 });

    const google = (await ok('marketing_ad_accounts.connect', { name: 'Google Ads', platform: 'google_ads', currency: 'COP' })).account;
    // 1,234,567.80 COP = 123,456,780 centavos; the "Total: cuenta" row is not spend.
    expect(await ok('marketing_ad_accounts.import_spend', { account_id: google.id, csv: GOOGLE_EXPORT })).toMatchObject({ rows: 1, total: 123_456_780 });
    // Another layout, named by a mapping, with a decimal comma: 2.500,75 = 250,075 centavos.
    expect(await ok('marketing_ad_accounts.import_spend', {
      account_id: google.id, csv: 'Nombre;Fecha;Gasto\nOtra;2026-11-04;"2.500,75"'.replace(/;/g, ','),
      mapping: { campaign: 'Nombre', day: 'Fecha', amount: 'Gasto', decimal_separator: ',' },
    })).toMatchObject({ rows: 1, total: 250_075 });

    // Refusals, each at /csv naming the row, and nothing of the file kept.
    const refused = async (csv: string, message: RegExp, field = '/csv', mapping?: object) => {
      const r = await sys.invoke('marketing_ad_accounts.import_spend', { account_id: meta.id, csv, ...(mapping ? { mapping } : {}) }, key);
      expect({ status: r.status, code: r.body.code, field: r.body.field }).toEqual({ status: 422, code: 'invalid_input', field });
      expect(r.body.error).toMatch(message);
    };
    const header = '"Campaign name","Day","Amount spent (COP)"';
    await refused(`"Campaign name","Day","Amount spent (USD)"\n"Marca","2026-11-05","10.00"`, /Row 2 is in USD; .* COP/);
    await refused(`${header}\n"Marca","2026-11-05","10.00"\n"Marca","05/11/2026","10.00"`, /Row 3: the day "05\/11\/2026"/);
    await refused(`${header}\n"Marca","2026-11-05","10.00"\n"Marca","2026-02-30","10.00"`, /Row 3: the day/);
    await refused(`${header}\n"Marca","2026-11-05","diez"`, /Row 2: the amount "diez"/);
    await refused(`${header}\n"Marca","2026-11-05","10.001"`, /at most two decimals/);
    await refused(`${header}\n"Marca","2026-11-05","-10"`, /Row 2: the amount/);
    await refused(`${header}\n"Marca","2026-11-05","1"\n"MARCA","2026-11-05","2"`, /Rows 2 and 3 both give/);
    await refused('"Name","Spend"\n"x","1"', /No campaign column/);
    await refused('"a","b\n', /not valid CSV/);
    await refused(`"Campaign name","Amount spent (COP)"\n"Marca","1"`, /No day column/);
    await refused(`${header}\n"Marca","2026-11-05","1"`, /No "Fecha" column/, '/mapping/day', { day: 'Fecha' });
    const after = await ok('marketing_ad_accounts.spend', { account_id: meta.id, from: '2026-11-01', to: '2026-11-30' });
    expect(after.total).toBe(30_000_050);
    expect(after.campaigns.flatMap((c: any) => c.days.map((d: any) => d.day))).not.toContain('2026-11-05');

    // Other refusals: the account of another workspace, a window backwards, a campaign mapped twice.
    const other = (await sys.workspace('Vecina SAS')).api_key;
    expect((await sys.invoke('marketing_ad_accounts.import_spend', { account_id: meta.id, csv: META_EXPORT }, other)).status).toBe(404);
    expect((await sys.invoke('marketing_ad_accounts.spend', { account_id: meta.id, from: '2026-11-01', to: '2026-11-30' }, other)).status).toBe(404);
    expect((await sys.invoke('marketing_ad_accounts.list', {}, other)).body.output.rows).toEqual([]);
    expect((await sys.invoke('marketing_ad_accounts.spend', { account_id: meta.id, from: '2026-11-30', to: '2026-11-01' }, key)).body).toMatchObject({ code: 'invalid_input', field: '/to' });
    expect((await sys.invoke('marketing_ad_accounts.update', { id: meta.id, campaign_tags: [{ campaign: 'A', tags: { x: 'a' } }, { campaign: ' a ', tags: { x: 'b' } }] }, key)).body)
      .toMatchObject({ code: 'invalid_input', field: '/campaign_tags/1/campaign' });
    expect((await sys.invoke('marketing_ad_accounts.connect', { name: 'X', platform: 'tiktok', currency: 'COP' }, key)).body).toMatchObject({ code: 'invalid_input', field: '/platform' });
  });

  it('books the spend as a draft bill, one line per campaign with its tag, counted by campaign in profitability; once per invoice number', async () => {
    const k = (await sys.workspace('Rentable SAS')).api_key;
    const call = (tool: string, input: unknown) => ok(tool, input, k);
    await call('dimensions.create', { key: 'campana', name: 'Campaña' });
    await call('dimensions.create_tag', { dimension: 'campana', key: 'navidad-2026', name: 'Navidad 2026' });
    const vendor = (await call('parties.create', { name: 'Meta Platforms Ireland Ltd', kind: 'vendor' })).party.id;
    const meta = (await call('marketing_ad_accounts.connect', { name: 'Meta', platform: 'meta', currency: 'COP', campaign_tags: [{ campaign: 'Navidad 2026', tags: { campana: 'navidad-2026' } }] })).account;
    await call('marketing_ad_accounts.import_spend', { account_id: meta.id, csv: META_EXPORT });

    const booking = { ad_account_id: meta.id, from: '2026-11-01', to: '2026-11-30', vendor_id: vendor, supplier_number: 'FBADS-2026-11', issue_date: '2026-11-30' };
    const { bill } = await call('bills.create_from_ad_spend', booking);
    expect(bill.status).toBe('draft');
    // Lines by campaign name: Marca 50,000.00 untagged; Navidad 2026 250,000.49 tagged navidad-2026.
    expect(bill.lines.map((l: any) => [l.description, l.account, l.unit_price, l.tags ?? {}])).toEqual([
      ['Meta · Marca', '5135', 5_000_000, {}],
      ['Meta · Navidad 2026', '5135', 25_000_049, { campana: 'navidad-2026' }],
    ]);
    expect(bill.total).toBe(30_000_049);
    // The same platform invoice again: refused, not a second bill.
    expect((await sys.invoke('bills.create_from_ad_spend', booking, k)).status).toBe(409);
    // No spend in the window, an unknown account: refused before anything is written.
    expect((await sys.invoke('bills.create_from_ad_spend', { ...booking, supplier_number: 'X-1', from: '2026-10-01', to: '2026-10-31' }, k)).body).toMatchObject({ code: 'invalid_input', field: '/to' });
    expect((await sys.invoke('bills.create_from_ad_spend', { ...booking, supplier_number: 'X-2', ad_account_id: 'mad_nope' }, k)).status).toBe(404);
    // Another workspace's account is not found through the graph either.
    expect((await sys.invoke('bills.create_from_ad_spend', { ...booking, supplier_number: 'X-3' }, key)).status).toBe(404);

    await call('bills.post', { id: bill.id });
    const p = await call('metrics.query', { metric: 'profitability', from: '2026-11-01', to: '2026-11-30', dimension_key: 'campana' });
    const row = (kind: string, tag: string | null) => p.rows.find((r: any) => r.kind === kind && r.tag === tag);
    expect(row('tag', 'navidad-2026')).toMatchObject({ income: 0, costs: 25_000_049, value: -25_000_049 });
    expect(row('untagged', null)).toMatchObject({ costs: 5_000_000 });
  });
});
