/**
 * The home dashboard of each module (sales, purchases, finance, payroll, projects): canvas blocks
 * over the metrics and record sources the modules declare, stored as ordinary dashboards
 * (`dashboards.save`, key `home-<module>`) so the canvas serves them like any other. Only blocks
 * whose metric, source or agenda lane exists in the running catalog are kept, and a module with
 * none is left out: the homes grow as modules land. Titles are Spanish (the product's default);
 * block words are the author's, as on any dashboard.
 */
export interface HomeAvailability {
  metrics: ReadonlySet<string>;
  sources: ReadonlySet<string>;
  agenda: ReadonlySet<string>;
}

type Block = Record<string, unknown> & { type: string };

export const HOME_MODULES = ['sales', 'purchases', 'finance', 'payroll', 'projects'] as const;
export type HomeModule = (typeof HOME_MODULES)[number];

const money = (label: string, metric: string, days?: number) => ({ label, query: { metric, ...(days ? { days } : {}) }, format: 'money', currency: 'COP', _metric: metric });

function wanted(module: HomeModule): { title: string; blocks: Block[] } {
  switch (module) {
    case 'sales':
      return { title: 'Inicio · Ventas', blocks: [
        { type: 'stats', title: 'Ventas', items: [money('Ingresos (90 días)', 'revenue', 90), money('Cartera por cobrar', 'ar_outstanding'), { label: 'Facturas (90 días)', query: { metric: 'invoices_status', days: 90 }, format: 'number', _metric: 'invoices_status' }] },
        { type: 'chart', title: 'Ingresos por mes', chart: 'bar', query: { metric: 'revenue', days: 365, interval: 'month' } },
        { type: 'table', title: 'Cartera por edades', query: { metric: 'ar_aging' } },
        { type: 'table', title: 'Mejores clientes', query: { metric: 'top_customers', days: 365, limit: 5 } },
        { type: 'records', title: 'Últimas facturas', records: { source: 'invoices', limit: 10 } },
        { type: 'records', title: 'Cotizaciones', records: { source: 'quotes', limit: 10 } },
        { type: 'agenda', title: 'Cobros por venir', agenda: { days: 30, sources: ['receivables'] } },
      ] };
    case 'purchases':
      return { title: 'Inicio · Compras', blocks: [
        { type: 'stats', title: 'Compras', items: [money('Gastos (90 días)', 'expenses', 90), money('Por pagar', 'ap_outstanding')] },
        { type: 'table', title: 'Cuentas por pagar por edades', query: { metric: 'ap_aging' } },
        { type: 'table', title: 'Principales proveedores', query: { metric: 'top_vendors', days: 365, limit: 5 } },
        { type: 'records', title: 'Facturas de proveedores', records: { source: 'bills', limit: 10 } },
        { type: 'records', title: 'Órdenes de compra', records: { source: 'purchase_orders', limit: 10 } },
        { type: 'agenda', title: 'Pagos por venir', agenda: { days: 30, sources: ['payables'] } },
      ] };
    case 'finance':
      return { title: 'Inicio · Finanzas', blocks: [
        { type: 'table', title: 'Estado de resultados', query: { metric: 'income_statement', days: 365 } },
        { type: 'table', title: 'Balance general', query: { metric: 'balance_sheet' } },
        { type: 'table', title: 'Conciliación bancaria', query: { metric: 'bank_reconciliation' } },
        { type: 'records', title: 'Movimientos bancarios', records: { source: 'bank_transactions', limit: 10 } },
        { type: 'records', title: 'Asientos contables', records: { source: 'journal_entries', limit: 10 } },
      ] };
    case 'payroll':
      return { title: 'Inicio · Nómina', blocks: [
        { type: 'stats', title: 'Nómina', items: [{ label: 'Empleados', query: { metric: 'payroll_employees' }, format: 'number', _metric: 'payroll_employees' }] },
        { type: 'records', title: 'Empleados', records: { source: 'employees', limit: 10 } },
        { type: 'records', title: 'Liquidaciones de nómina', records: { source: 'payroll_runs', limit: 10 } },
        { type: 'records', title: 'Desprendibles de pago', records: { source: 'payslips', limit: 10 } },
      ] };
    case 'projects':
      return { title: 'Inicio · Proyectos', blocks: [
        { type: 'records', title: 'Proyectos', records: { source: 'projects', limit: 10 } },
        { type: 'records', title: 'Tareas', records: { source: 'project_tasks', limit: 20 } },
      ] };
  }
}

/** Keeps a block when what it reads exists; stat cards are kept one by one. */
function keep(block: Block, a: HomeAvailability): Block | null {
  if (block.type === 'stats') {
    const items = (block.items as { _metric: string }[]).filter((i) => a.metrics.has(i._metric)).map(({ _metric: _m, ...rest }) => rest);
    return items.length ? { ...block, items } : null;
  }
  const metric = (block.query as { metric?: string } | undefined)?.metric;
  if (metric !== undefined) return a.metrics.has(metric) ? block : null;
  const source = (block.records as { source?: string } | undefined)?.source;
  if (source !== undefined) return a.sources.has(source) ? block : null;
  const lanes = (block.agenda as { sources?: string[] } | undefined)?.sources;
  if (lanes) return lanes.every((l) => a.agenda.has(l)) ? block : null;
  return block;
}

/** The `dashboards.save` inputs of the module homes this catalog can fill (one per module with data), sales first; saved in reverse so the newest-first list shows sales first. */
export function homeDashboards(a: HomeAvailability): { key: string; title: string; blocks: Block[] }[] {
  const out: { key: string; title: string; blocks: Block[] }[] = [];
  for (const module of HOME_MODULES) {
    const { title, blocks } = wanted(module);
    const kept = blocks.map((b) => keep(b, a)).filter((b): b is Block => b !== null);
    if (kept.length) out.push({ key: `home-${module}`, title, blocks: kept });
  }
  return out;
}
