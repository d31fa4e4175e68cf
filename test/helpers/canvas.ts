import { localDate } from '../../shared/src/periods.ts';
import type { TestSystem } from './system.ts';

/** YYYY-MM-DD, `days` from the workspace's today (Colombia, UTC−5, as the product dates things). */
export function dayOffset(days: number): string {
  return localDate(new Date(Date.now() + days * 86_400_000));
}

/**
 * Real receivables data through the public tools: e-invoicing set up, three customers, and posted
 * invoices over the last two months (some falling due in the coming weeks, one paid in part).
 */
export async function seedReceivables(sys: TestSystem, key: string): Promise<{ parties: Record<string, { id: string; name: string }>; invoices: string[] }> {
  const ok = async (tool: string, input: unknown): Promise<any> => {
    const r = await sys.invoke(tool, input, key);
    if (r.status !== 200) throw new Error(`${tool} → ${r.status} ${JSON.stringify(r.body)}`);
    return r.body.output;
  };
  await ok('einvoicing.configure', {
    issuer: { nit: '900373115-3', name: 'Cuadra Demo SAS' }, technical_key: 'fc8eac422eba16e22ffd8c6f94b3f40a6e38162c', software_pin: '75315',
    numbering: { invoice: { prefix: 'SETP', from: 990000001, to: 995000000, resolution: '18760000001' }, credit_note: { prefix: 'NC', from: 1, to: 5000 } },
  });
  const parties: Record<string, { id: string; name: string }> = {};
  for (const [k, name] of [['andina', 'Tienda Andina SAS'], ['buho', 'Ferretería Búho Ltda'], ['ana', 'Ana Gómez']] as const) {
    parties[k] = { id: (await ok('parties.create', { name, kind: 'customer' })).party.id, name };
  }
  const item = (await ok('items.create', { name: 'Consultoría', kind: 'service', sku: 'CONS-H', price: { amount: 15000000, currency: 'COP' }, tax_rate_ppm: 190000 })).item.id;
  const plan: [string, number, number, number][] = [
    ['andina', -50, 10, -20], ['andina', -30, 4, 10], ['buho', -25, 6, 5], ['buho', -12, 2, 18], ['ana', -8, 1, 22], ['andina', -3, 3, 27],
  ];
  const invoices: string[] = [];
  for (const [who, issued, hours, due] of plan) {
    const draft = (await ok('invoices.create', {
      customer_id: parties[who].id, currency: 'COP', issue_date: dayOffset(issued), due_date: dayOffset(due),
      lines: [{ item_id: item, quantity: hours }],
    })).invoice;
    invoices.push((await ok('invoices.post', { id: draft.id })).invoice.id);
  }
  await ok('payments.register', { customer_id: parties.andina.id, amount: 50000000, currency: 'COP', date: dayOffset(-2), invoices: [{ invoice_id: invoices[0] }] });
  return { parties, invoices };
}

/** A dashboard mixing every leaf type (and every container) over the seeded data. */
export function mixedDashboard(): { title: string; blocks: unknown[] } {
  return {
    title: 'Cobranza',
    blocks: [
      { type: 'heading', title: 'Cobranza del trimestre', variant: 'h2' },
      { type: 'params', title: 'Filtros', params: [
        { key: 'days', type: 'select', label: 'Window', default: '90', options: [{ value: '30', label: '30 days' }, { value: '90', label: '90 days' }] },
        { key: 'who', type: 'search', label: 'Customer contains' },
      ] },
      { type: 'stats', title: 'Resumen', live: ['invoices', 'payments'], items: [
        { label: 'Revenue', query: { metric: 'revenue', compare: 'previous_period' } },
        { label: 'Receivables', query: { metric: 'ar_outstanding' } },
        { label: 'Inventory', query: { metric: 'saved:sin-guardar' } },
      ] },
      { type: 'row', children: [
        { type: 'chart', title: 'Revenue by week', chart: 'bar', key: 'week', query: { metric: 'revenue', interval: 'week' }, inputs: [{ target: 'days', param: 'days' }], live: ['invoices'] },
        { type: 'chart', title: 'Invoices by status', chart: 'pie', query: { metric: 'invoices_status' } },
      ] },
      { type: 'row', children: [
        { type: 'table', title: 'Top customers', key: 'top', query: { metric: 'top_customers', limit: 5 } },
        { type: 'records', title: 'Customers', key: 'cust', span: 6, records: { source: 'parties', kind: 'customer' }, inputs: [{ target: 'search', param: 'who' }], live: ['parties'] },
      ] },
      { type: 'records', title: 'Invoices of the selected customer', records: { source: 'invoices', limit: 10 }, bind: { block: 'cust', field: 'name', param: 'search' }, live: ['invoices', 'payments'] },
      { type: 'detail', title: 'Latest invoice', records: { source: 'invoices' } },
      { type: 'tabs', children: [
        { type: 'agenda', title: 'Agenda', agenda: { days: 60, sources: ['receivables', 'recurring', 'tax'] } },
        { type: 'event', title: 'Next due', event: { source: 'receivables', horizon: 60 } },
        { type: 'kanban', title: 'Deals', board: { limit: 10 } },
      ] },
      { type: 'section', title: 'More', children: [
        { type: 'callout', variant: 'warning', markdown: 'Invoices **overdue** are followed up on Mondays.' },
        { type: 'text', markdown: 'Figures in COP.' },
        { type: 'divider' },
        { type: 'image', title: 'Logo', url: 'data:image/svg+xml;base64,PHN2ZyB4bWxucz0naHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmcnIHdpZHRoPSc4MCcgaGVpZ2h0PScyNCc+PHJlY3Qgd2lkdGg9JzgwJyBoZWlnaHQ9JzI0JyBmaWxsPScjMWYzYThhJy8+PC9zdmc+' },
        { type: 'profile', title: 'Company', profile: { name: 'Cuadra Demo SAS', nit: '900373115-3' } },
        { type: 'result', title: 'Ledger check', result: { tool: 'ledger.verify' } },
      ] },
      { type: 'stack', children: [
        { type: 'form', title: 'New customer', actions: [{ tool: 'parties.create', label: 'Create customer', values: { kind: 'customer' }, confirm: 'Create this customer?' }] },
        { type: 'actions', actions: [{ tool: 'parties.create', label: 'Quick add', values: { kind: 'customer', name: 'Quick SAS' }, icon: 'plus' }, { href: '/dashboards', label: 'All dashboards', variant: 'link' }] },
        { type: 'button', actions: [{ tool: 'ledger.verify', label: 'Verify ledger', icon: 'check' }] },
        { type: 'toggle', title: 'Reminders', actions: [{ tool: 'ledger.verify', field: 'enabled' }] },
        { type: 'chart', title: 'Inventory value', chart: 'line', query: { metric: 'saved:sin-guardar' } },
      ] },
    ],
  };
}
