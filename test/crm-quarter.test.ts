// A quarter of selling before the invoice, over real HTTP through the gateway: two pipelines (5
// and 3 stages), 40 deals with custom fields, moved across the board, 10 won — 5 of them through
// quote → invoice in finance — and 8 lost with reasons. The kanban block, the four records
// sources and the crm_pipeline metric are checked against a hand calculation written out below;
// then 10 concurrent moves of one card, an Idempotency-Key retry, a stage rule as an autonomy
// policy and the wrong-type custom field refusal.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSystem, type TestSystem } from './helpers/system.ts';

let sys: TestSystem;
let key: string;

async function ok(tool: string, input: unknown, k = key, headers?: Record<string, string>): Promise<any> {
  const r = await sys.invoke(tool, input, k, headers);
  if (r.status !== 200) throw new Error(`${tool} → ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.output;
}

const C = 1_000_00; // one thousand pesos, in cents: deal i is worth i × C
const ids: string[] = []; // ids[i] = deal i (1..40)
let ventas: any;
let renov: any;
const stage = (p: any, name: string): string => p.stages.find((s: any) => s.name === name).id;

beforeAll(async () => {
  sys = await startTestSystem('crm_quarter');
  key = (await sys.workspace('Ventas del Trimestre SAS')).api_key;
});
afterAll(async () => {
  await sys?.stop();
});

describe('a quarter of deals', () => {
  it('sets up two pipelines, custom fields and customers', async () => {
    ventas = (await ok('pipelines.create', {
      name: 'Ventas', key: 'ventas', stages: [
        { name: 'Prospecto', kind: 'open', probability_ppm: 100_000, rotting_days: 14 },
        { name: 'Propuesta', kind: 'open', probability_ppm: 400_000 },
        { name: 'Negociación', kind: 'open', probability_ppm: 700_000 },
        { name: 'Ganado', kind: 'won' },
        { name: 'Perdido', kind: 'lost' },
      ],
    })).pipeline;
    renov = (await ok('pipelines.create', {
      name: 'Renovaciones', key: 'renov', lost_reasons: ['Sin presupuesto', 'Cambió de proveedor'],
      stages: [{ name: 'Por renovar', kind: 'open', probability_ppm: 500_000 }, { name: 'Renovado', kind: 'won' }, { name: 'No renovado', kind: 'lost' }],
    })).pipeline;
    expect(ventas.default).toBe(true);
    await ok('crm_fields.create', { entity: 'deal', key: 'segmento', label: 'Segmento', type: 'select', options: ['pyme', 'grande'] });
    await ok('crm_fields.create', { entity: 'deal', key: 'presupuesto', label: 'Presupuesto', type: 'money' });
  });

  it('refuses a custom value of the wrong type with 422 at its pointer', async () => {
    const r = await sys.invoke('deals.create', { title: 'Mal', amount: C, custom: { presupuesto: 'mucho' } }, key);
    expect(r.status).toBe(422);
    expect(r.body).toMatchObject({ code: 'invalid_input', field: '/custom/presupuesto' });
  });

  it('creates 40 deals, moves them, wins 10 (5 through quote → invoice) and loses 8 with reasons', async () => {
    const andina = (await ok('parties.create', { name: 'Tienda Andina SAS', kind: 'customer', tax_id: { type: 'NIT', number: '800197268-4' } })).party;
    const buho = (await ok('parties.create', { name: 'Librería Búho', kind: 'customer' })).party;
    ids.push('');
    for (let i = 1; i <= 40; i++) {
      const input: Record<string, unknown> = {
        title: `Deal ${i}`, party_id: i % 2 ? andina.id : buho.id, pipeline: i <= 30 ? 'ventas' : 'renov',
        custom: { segmento: i % 3 ? 'pyme' : 'grande', presupuesto: i * C * 2 },
      };
      // Deals 1–5 sell i licences of $1,000 with VAT 19 %: their amount is the lines' subtotal, i × C.
      if (i <= 5) input.lines = [{ description: 'Licencia anual', quantity: i, unit_price: C, tax_rate_ppm: 190_000 }];
      else input.amount = i * C;
      ids.push((await ok('deals.create', input)).deal.id);
    }
    for (let i = 12; i <= 18; i++) await ok('deals.move', { id: ids[i], stage_id: stage(ventas, 'Propuesta') });
    for (let i = 19; i <= 23; i++) {
      await ok('deals.move', { id: ids[i], stage_id: stage(ventas, 'Propuesta') });
      await ok('deals.move', { id: ids[i], stage_id: stage(ventas, 'Negociación') });
    }
    // Deals 1–5: quote made from the deal in finance, sent, accepted, converted to an invoice; then won.
    for (let i = 1; i <= 5; i++) {
      const { quote, created } = await ok('quotes.create_from_deal', { deal_id: ids[i] });
      expect(created).toBe(true);
      // Once per deal: asked again, the same quote.
      expect(await ok('quotes.create_from_deal', { deal_id: ids[i] })).toMatchObject({ created: false, quote: { id: quote.id } });
      expect(quote).toMatchObject({ customer_id: i % 2 ? andina.id : buho.id, subtotal: i * C, tax_total: i * 19_000, total: i * 119_000, source: { deal_id: ids[i] } });
      await ok('quotes.send', { id: quote.id });
      await ok('quotes.accept', { id: quote.id });
      const converted = await ok('quotes.convert', { id: quote.id, to: 'invoice' });
      expect(converted.invoice).toMatchObject({ status: 'draft', total: i * 119_000, source: { quote_id: quote.id, deal_id: ids[i] } });
      await ok('deals.win', { id: ids[i] });
    }
    await ok('deals.win', { id: ids[6] });
    for (let i = 7; i <= 11; i++) await ok('deals.lose', { id: ids[i], reason: 'Precio' });
    for (let i = 31; i <= 34; i++) await ok('deals.win', { id: ids[i] });
    for (let i = 35; i <= 37; i++) await ok('deals.lose', { id: ids[i], reason: 'Sin presupuesto', note: 'Recorte' });
    // The deal shows what finance made from it: deal 3's invoice is 3 × $1,190 = $3,570.
    const three = await ok('deals.get', { id: ids[3] });
    expect(three.deal).toMatchObject({ status: 'won', amount: 3 * C });
    expect(three.documents).toMatchObject({ quote: { status: 'converted', total: 357_000 }, invoice: { status: 'draft', total: 357_000 }, sales_order: null });
    expect(three.deal.history.map((h: any) => h.to)).toEqual([stage(ventas, 'Prospecto'), stage(ventas, 'Ganado')]);
  });

  // Hand calculation (amounts in cents; deal i = i × 100,000):
  //   Ventas  Prospecto   deals 24–30: 7 deals, Σi = 24+…+30 = 189 → 18,900,000; × 10 % = 1,890,000
  //           Propuesta   deals 12–18: 7 deals, Σi = 105 → 10,500,000; × 40 % = 4,200,000
  //           Negociación deals 19–23: 5 deals, Σi = 105 → 10,500,000; × 70 % = 7,350,000
  //           Ganado      deals 1–6:   6 deals, Σi = 21  →  2,100,000; × 100 % = 2,100,000
  //           Perdido     deals 7–11:  5 deals, Σi = 45  →  4,500,000; × 0 %
  //   Renov.  Por renovar deals 38–40: 3 deals, Σi = 117 → 11,700,000; × 50 % = 5,850,000
  //           Renovado    deals 31–34: 4 deals, Σi = 130 → 13,000,000
  //           No renovado deals 35–37: 3 deals, Σi = 108 → 10,800,000
  //   Open: 7 + 7 + 5 + 3 = 22 deals, 18.9 M + 10.5 M + 10.5 M + 11.7 M = 51,600,000; weighted 1.89 M + 4.2 M + 7.35 M + 5.85 M = 19,290,000
  //   Won: 6 + 4 = 10 deals, 2,100,000 + 13,000,000 = 15,100,000; lost: 5 + 3 = 8, 4,500,000 + 10,800,000 = 15,300,000
  //   Win rate = 10 / (10 + 8) = 0.5555… → 5,556 basis points.
  const VENTAS = [[7, 18_900_000, 1_890_000], [7, 10_500_000, 4_200_000], [5, 10_500_000, 7_350_000], [6, 2_100_000, 2_100_000], [5, 4_500_000, 0]];
  const RENOV = [[3, 11_700_000, 5_850_000], [4, 13_000_000, 13_000_000], [3, 10_800_000, 0]];

  it('renders the kanban block of the default pipeline and of renov as the hand calculation', async () => {
    const { blocks } = await ok('dashboards.render', { blocks: [{ type: 'kanban', board: { pipeline: '', limit: 3 } }, { type: 'kanban', board: { pipeline: 'renov' } }] });
    const [v, r] = blocks.map((b: any) => b.board_data);
    expect(v.pipeline.key).toBe('ventas');
    expect(v.columns.map((c: any) => [c.count, c.amount, c.weighted_amount])).toEqual(VENTAS);
    expect(r.columns.map((c: any) => [c.count, c.amount, c.weighted_amount])).toEqual(RENOV);
    // Three cards at most per column, newest on top: Prospecto shows deals 30, 29, 28.
    expect(v.columns[0].deals.map((d: any) => d.title)).toEqual(['Deal 30', 'Deal 29', 'Deal 28']);
    expect(v.columns[0].more).toBe(true);
    expect(r.columns[0].deals.map((d: any) => d.title)).toEqual(['Deal 40', 'Deal 39', 'Deal 38']);
  });

  it('answers the four sources as the hand calculation', async () => {
    const list = async (q: Record<string, unknown>) => ok('records.list', q);
    const open = await list({ source: 'crm_deals', status: 'open', limit: 100 });
    expect(open.rows).toHaveLength(22);
    expect(open.total).toBe(22);
    expect(open.rows.reduce((a: number, d: any) => a + d.amount, 0)).toBe(51_600_000);
    const lostVentas = await list({ source: 'crm_deals', status: 'lost', ref: 'ventas', limit: 100 });
    expect(lostVentas.total).toBe(5);
    expect(lostVentas.rows.every((d: any) => d.lost_reason === 'Precio')).toBe(true);
    const won = await list({ source: 'crm_deals', status: 'won', limit: 100 });
    expect(won.rows.map((d: any) => d.title).sort()).toEqual(['Deal 1', 'Deal 2', 'Deal 3', 'Deal 31', 'Deal 32', 'Deal 33', 'Deal 34', 'Deal 4', 'Deal 5', 'Deal 6']);
    expect((await list({ source: 'crm_deals', search: 'deal 17' })).rows.map((d: any) => d.title)).toEqual(['Deal 17']);
    expect((await list({ source: 'crm_deals', search: 'búho', limit: 100 })).rows).toHaveLength(20);
    const pipelines = await list({ source: 'crm_pipelines' });
    expect(pipelines.rows.map((p: any) => [p.key, p.default, p.stages])).toEqual([['ventas', true, 5], ['renov', false, 3]]);
    const stages = await list({ source: 'crm_stages', ref: 'renov' });
    expect(stages.rows.map((s: any) => [s.name, s.kind, s.probability_ppm])).toEqual([['Por renovar', 'open', 500_000], ['Renovado', 'won', 1_000_000], ['No renovado', 'lost', 0]]);
    expect((await list({ source: 'crm_stages' })).total).toBe(8);
    const fields = await list({ source: 'crm_fields', kind: 'deal', status: 'active' });
    expect(fields.rows.map((f: any) => [f.key, f.type])).toEqual([['segmento', 'select'], ['presupuesto', 'money']]);
    // A party's page: its open deals (odd deals are Tienda Andina's: 13, 15, …, 29 and 39 are open: 10), activities, open invoices from finance.
    const andina = (await ok('parties.list', { search: 'andina' })).rows[0];
    const page = await ok('parties.get', { id: andina.id });
    expect(page.open_deals.map((d: any) => Number(d.title.slice(5))).sort((a: number, b: number) => a - b)).toEqual([13, 15, 17, 19, 21, 23, 25, 27, 29, 39]);
    expect(page.open_invoices).toEqual([]); // its invoices from quotes are drafts: nothing open yet
    const refused = await sys.invoke('records.list', { source: 'crm_deals', status: 'closed' }, key);
    expect(refused.status).toBe(422);
    expect(refused.body.field).toBe('/status');
  });

  it('answers crm_pipeline as the hand calculation', async () => {
    const m = await ok('metrics.query', { metric: 'crm_pipeline', days: 30, compare: 'previous_period' });
    expect(m).toMatchObject({ metric: 'crm_pipeline', unit: 'money', currency: 'COP', summary: { value: 15_100_000, previous: 0 } });
    const stageRows = m.rows.filter((r: any) => r.row === 'stage');
    expect(stageRows.map((r: any) => [r.count, r.amount, r.weighted_amount])).toEqual([...VENTAS, ...RENOV]);
    expect(m.rows.find((r: any) => r.row === 'totals')).toMatchObject({
      open_count: 22, open_amount: 51_600_000, weighted_amount: 19_290_000, won_count: 10, won_amount: 15_100_000, lost_count: 8, lost_amount: 15_300_000, win_rate_bps: 5_556,
    });
    // Every deal that left Propuesta (deals 19–23) left it today: 5 exits.
    expect(stageRows.find((r: any) => r.stage === 'Propuesta')).toMatchObject({ exits: 5 });
    expect(m.series.reduce((a: number, p: any) => a + p.value, 0)).toBe(15_100_000);
  });
});

describe('one card, many hands', () => {
  it('10 concurrent deals.move of one card leave one history entry per stage change and one order', async () => {
    const card = ids[24];
    const targets = ['Propuesta', 'Negociación'].map((n) => stage(ventas, n));
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => sys.invoke('deals.move', { id: card, stage_id: targets[i % 2] }, key)));
    expect(answers.map((a) => a.status)).toEqual(Array(10).fill(200));
    const { deal } = await ok('deals.get', { id: card });
    const h = deal.history;
    for (let i = 1; i < h.length; i++) expect(h[i].from).toBe(h[i - 1].to);
    // Each answer that found the card elsewhere moved it and added one entry; one that found it there already changed nothing.
    const changed = new Set(answers.map((a) => a.body.output.deal.history.length));
    expect(h.length - 1).toBe(changed.size);
    const { blocks } = await ok('dashboards.render', { blocks: [{ type: 'kanban', board: { pipeline: 'ventas', limit: 100 } }] });
    const cols = blocks[0].board_data.columns;
    expect(cols.flatMap((c: any) => c.deals.map((d: any) => d.id)).filter((x: string) => x === card)).toHaveLength(1);
    expect(cols.find((c: any) => c.stage_id === deal.stage_id).deals.some((d: any) => d.id === card)).toBe(true);
    expect(cols.reduce((a: number, c: any) => a + c.count, 0)).toBe(30);
    for (const c of cols) expect(c.deals).toHaveLength(c.count);
  });

  it('an Idempotency-Key retry of a board move moves the card once', async () => {
    const card = ids[25];
    const move = { id: card, stage_id: stage(ventas, 'Propuesta') };
    const first = await sys.invoke('deals.move', move, key, { 'Idempotency-Key': 'board-move-25' });
    await ok('deals.move', { id: card, stage_id: stage(ventas, 'Prospecto') });
    const retry = await sys.invoke('deals.move', move, key, { 'Idempotency-Key': 'board-move-25' });
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.body).toEqual(first.body);
    const { deal } = await ok('deals.get', { id: card });
    expect(deal.stage_id).toBe(stage(ventas, 'Prospecto'));
    expect(deal.history).toHaveLength(3);
  });

  it('a stage rule is an autonomy policy: winning a deal above an amount waits for a person', async () => {
    const policy = await ok('policies.create', {
      name: 'Big wins need a person', priority: 10, match: { tools: ['deals.move', 'deals.win'] },
      conditions: { amount_over: 35 * C, facts: { stage_kind: ['won'] } }, effect: 'hold',
    });
    const small = await sys.invoke('deals.move', { id: ids[26], stage_id: stage(ventas, 'Negociación') }, key);
    expect(small.status).toBe(200); // not into a won stage
    const big = await sys.invoke('deals.win', { id: ids[38] }, key); // 38 × C, above 35 × C
    expect(big.status).toBe(202);
    expect(big.body).toMatchObject({ status: 'pending_approval' });
    const bigMove = await sys.invoke('deals.move', { id: ids[39], stage_id: stage(renov, 'Renovado') }, key);
    expect(bigMove.status).toBe(202);
    const under = await sys.invoke('deals.win', { id: ids[27] }, key); // 27 × C
    expect(under.status).toBe(200);
    expect((await ok('deals.get', { id: ids[38] })).deal.status).toBe('open');
    await ok('policies.delete', { id: policy.policy.id });
  });
});
