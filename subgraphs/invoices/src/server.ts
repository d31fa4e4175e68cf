import { clampLimit, createSubgraphServer, CuadraError, pageNewestFirst, reaches, subgraphTypeDefs, type SubgraphContext, type SubgraphDeps, type SubgraphServer } from '@cuadra/shared';
import express from 'express';
import { sandboxReceive } from './einvoicing/sandbox.ts';
import { invoices, type InvoiceDoc } from './models/invoice.ts';
import { items, type ItemDoc } from './models/item.ts';
import { migrateRatesToPpm } from './models/migrations.ts';
import { owned } from './modules/index.ts';
import type { MetricQuery } from './readouts/periods.ts';
import { receivablesMetric } from './readouts/receivables.ts';
import { invoicesRecords, receivablesAgenda, recurringAgenda, type RecordsQuery } from './readouts/records.ts';
import { validateMetricQuery, validateRecordsQuery } from './readouts/schemas.ts';

/** Subgraph name: its database, its tool mutation and its entry in the supergraph. */
export const name = 'invoices';

/** The composite reads this subgraph's modules answer (the build writes them into the catalog; the gateway routes by them). */
export const reads = owned.reads;

/** Every tool this subgraph owns: the sum of its modules' manifests (src/modules/). */
export const tools = owned.tools;

/** The SDL this subgraph serves (schema.graphql + the shared tool mutation). */
export function typeDefs(): string {
  return subgraphTypeDefs(name, new URL('../schema.graphql', import.meta.url), owned.readers);
}

function invoiceNode(i: InvoiceDoc) {
  return {
    id: i._id, kind: i.kind, status: i.status, number: i.number, customer: { id: i.customer_id }, currency: i.currency,
    issueDate: i.issue_date, dueDate: i.due_date, subtotal: i.subtotal, taxTotal: i.tax_total, total: i.total, createdAt: i.created_at.toISOString(),
    withholdingTotal: i.withholding_total ?? 0, amountDue: i.amount_due ?? i.total, balance: i.balance ?? i.total, cufe: i.cufe ?? null,
    lines: i.lines.map((l) => ({
      itemId: l.item_id, description: l.description, quantity: l.quantity, unitPrice: l.unit_price, taxRatePpm: l.tax_rate_ppm,
      discountBps: l.discount_bps, subtotal: l.subtotal, tax: l.tax, total: l.total,
    })),
  };
}

function itemNode(i: ItemDoc) {
  return { id: i._id, kind: i.kind, name: i.name, sku: i.sku, unit: i.unit, price: i.price, currency: i.currency, taxRatePpm: i.tax_rate_ppm };
}


/** Builds the invoices service, ready to listen. Also serves the built-in e-invoicing sandbox at POST /einvoicing/sandbox. */
export async function createServer(deps: SubgraphDeps): Promise<SubgraphServer> {
  const server = await createSubgraphServer(
    {
      name,
      ...owned,
      typeDefs: typeDefs(),
      resolvers: {
        Query: {
          invoice: async (_: unknown, args: { id: string }, ctx: SubgraphContext) => {
            const i = await invoices(ctx.db).findOne({ _id: args.id, workspace: ctx.workspace }).lean();
            return i ? invoiceNode(i) : null;
          },
          invoices: async (_: unknown, args: { status?: string; customerId?: string; limit?: number }, ctx: SubgraphContext) => {
            const match = args.status || args.customerId ? (i: InvoiceDoc) => (!args.status || i.status === args.status) && (!args.customerId || i.customer_id === args.customerId) : undefined;
            const page = await pageNewestFirst<InvoiceDoc>(invoices(ctx.db), { workspace: ctx.workspace, limit: clampLimit(args.limit), match });
            return page.rows.map(invoiceNode);
          },
          items: async (_: unknown, args: { search?: string; limit?: number }, ctx: SubgraphContext) => {
            const text = args.search?.toLowerCase();
            const page = await pageNewestFirst<ItemDoc>(items(ctx.db), { workspace: ctx.workspace, limit: clampLimit(args.limit), match: text ? (i) => i.name_lc.includes(text) : undefined });
            return page.rows.map(itemNode);
          },
          receivablesMetric: async (_: unknown, args: { query: unknown }, ctx: SubgraphContext) => {
            validateMetricQuery(args.query);
            return receivablesMetric(ctx.db, ctx.workspace, args.query as MetricQuery);
          },
          invoicesRecords: async (_: unknown, args: { query: unknown }, ctx: SubgraphContext) => {
            validateRecordsQuery(args.query);
            const q = args.query as RecordsQuery;
            const module = reads.sources?.[q.source]?.module;
            if (module && !reaches(ctx.principal, { name: `${module}.list`, risk: 'read', module })) {
              throw new CuadraError('policy_denied', `This credential does not reach the ${module} data.`);
            }
            return invoicesRecords(ctx.db, ctx.workspace, q);
          },
          receivablesAgenda: async (_: unknown, args: { from?: string; to?: string; days?: number; limit?: number; overdue?: boolean }, ctx: SubgraphContext) => {
            for (const key of ['from', 'to'] as const) {
              if (args[key] !== undefined && args[key] !== null && !/^\d{4}-\d{2}-\d{2}$/.test(args[key]!)) throw new CuadraError('invalid_input', `${key} is a YYYY-MM-DD date.`, { field: `/${key}` });
            }
            return receivablesAgenda(ctx.db, ctx.workspace, { from: args.from ?? undefined, to: args.to ?? undefined, days: args.days ?? undefined, limit: args.limit ?? undefined, overdue: args.overdue ?? undefined });
          },
          recurringAgenda: async (_: unknown, args: { from?: string; to?: string; days?: number; limit?: number }, ctx: SubgraphContext) => {
            for (const key of ['from', 'to'] as const) {
              if (args[key] !== undefined && args[key] !== null && !/^\d{4}-\d{2}-\d{2}$/.test(args[key]!)) throw new CuadraError('invalid_input', `${key} is a YYYY-MM-DD date.`, { field: `/${key}` });
            }
            return recurringAgenda(ctx.db, ctx.workspace, { from: args.from ?? undefined, to: args.to ?? undefined, days: args.days ?? undefined, limit: args.limit ?? undefined });
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
  const migrated = await migrateRatesToPpm(deps.db);
  if (migrated > 0) deps.log.info({ migrated }, 'rates stored in basis points converted to parts per million');
  // The authority's test environment, built in: EINVOICING_ENDPOINT may point here (or anywhere
  // that answers the same way); unset, the service calls the sandbox in-process.
  const sandbox = express.Router();
  sandbox.post('/einvoicing/sandbox', express.text({ type: () => true, limit: '5mb' }), async (req, res) => {
    try {
      res.json(await sandboxReceive(deps.db, typeof req.body === 'string' ? req.body : ''));
    } catch (err) {
      deps.log.error({ err }, 'sandbox failed');
      res.status(500).json({ is_valid: false, status_code: '99', status_description: 'Error interno del ambiente de pruebas.', errors: [], document_key: null, track_id: null });
    }
  });
  // Before the error handler createSubgraphServer installed: routes registered later still match
  // (express walks its stack in order and the error handler only sees errors).
  server.app.use(sandbox);
  return server;
}
