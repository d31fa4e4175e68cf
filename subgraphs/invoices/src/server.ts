import { clampLimit, createSubgraphServer, escapeRegex, subgraphTypeDefs, type SubgraphContext, type SubgraphDeps, type SubgraphServer } from '@cuadra/shared';
import { invoices, type InvoiceDoc } from './models/invoice.ts';
import { items, type ItemDoc } from './models/item.ts';
import { modules, tools } from './tools/index.ts';

/** Subgraph name: its database, its tool mutation and its entry in the supergraph. */
export const name = 'invoices';

/** The SDL this subgraph serves (schema.graphql + the shared tool mutation). */
export function typeDefs(): string {
  return subgraphTypeDefs(name, new URL('../schema.graphql', import.meta.url));
}

function invoiceNode(i: InvoiceDoc) {
  return {
    id: i._id, kind: i.kind, status: i.status, number: i.number, customer: { id: i.customer_id }, currency: i.currency,
    issueDate: i.issue_date, dueDate: i.due_date, subtotal: i.subtotal, taxTotal: i.tax_total, total: i.total, createdAt: i.created_at.toISOString(),
    lines: i.lines.map((l) => ({
      itemId: l.item_id, description: l.description, quantity: l.quantity, unitPrice: l.unit_price, taxRateBps: l.tax_rate_bps,
      discountBps: l.discount_bps, subtotal: l.subtotal, tax: l.tax, total: l.total,
    })),
  };
}

function itemNode(i: ItemDoc) {
  return { id: i._id, kind: i.kind, name: i.name, sku: i.sku, unit: i.unit, price: i.price, currency: i.currency, taxRateBps: i.tax_rate_bps };
}

/** Builds the invoices service, ready to listen. */
export function createServer(deps: SubgraphDeps): Promise<SubgraphServer> {
  return createSubgraphServer(
    {
      name,
      modules,
      tools,
      models: [invoices, items],
      typeDefs: typeDefs(),
      readGuards: { 'Query.invoice': 'invoices', 'Query.invoices': 'invoices', 'Query.items': 'items', Invoice: 'invoices', Item: 'items' },
      resolvers: {
        Query: {
          invoice: async (_: unknown, args: { id: string }, ctx: SubgraphContext) => {
            const i = await invoices(ctx.db).findOne({ _id: args.id, workspace: ctx.workspace }).lean();
            return i ? invoiceNode(i) : null;
          },
          invoices: async (_: unknown, args: { status?: string; customerId?: string; limit?: number }, ctx: SubgraphContext) => {
            const filter: Record<string, unknown> = { workspace: ctx.workspace };
            if (args.status) filter.status = args.status;
            if (args.customerId) filter.customer_id = args.customerId;
            const rows = await invoices(ctx.db).find(filter).sort({ created_at: -1 }).limit(clampLimit(args.limit)).lean();
            return rows.map(invoiceNode);
          },
          items: async (_: unknown, args: { search?: string; limit?: number }, ctx: SubgraphContext) => {
            const filter: Record<string, unknown> = { workspace: ctx.workspace };
            if (args.search) filter.name_lc = { $regex: escapeRegex(args.search.toLowerCase()) };
            const rows = await items(ctx.db).find(filter).sort({ created_at: -1 }).limit(clampLimit(args.limit)).lean();
            return rows.map(itemNode);
          },
        },
        Invoice: {
          __resolveReference: async (ref: { id: string }, ctx: SubgraphContext) => {
            const i = await invoices(ctx.db).findOne({ _id: ref.id, workspace: ctx.workspace }).lean();
            return i ? invoiceNode(i) : null;
          },
        },
        Item: {
          __resolveReference: async (ref: { id: string }, ctx: SubgraphContext) => {
            const i = await items(ctx.db).findOne({ _id: ref.id, workspace: ctx.workspace }).lean();
            return i ? itemNode(i) : null;
          },
        },
      },
    },
    deps,
  );
}
