import { clampLimit, CuadraError, defineSubgraph, entityResolvers, pageNewestFirst, type SubgraphContext } from '@cuadra/shared';
import express from 'express';
import { sandboxReceive } from './e-documents/sandbox.ts';
import { invoices, type InvoiceDoc } from './modules/invoices/model.ts';
import { itemMatches, items, type ItemDoc } from './modules/items/model.ts';
import { priceLine } from './lib/line-model.ts';
import { migrateRatesToPpm, migrateRunHolds } from './lib/migrations.ts';
import { sealPlainSettings } from './lib/settings.ts';
import { backfillLedgerRollups } from './books/backfill.ts';
import { backfillLeaders } from './books/party-leaders.ts';
import { declareJournalSources } from './books/index.ts';
import { closedMonthsFrom } from './books/periods.ts';
import { bookingInvoiceId, bookingInvoicing } from './modules/invoices/bookings.ts';
import { inventoryPull } from './modules/journal/inventory_pull_job.ts';
import { payrollPull } from './accounting/payroll_pull.ts';
import { backfillBillsDue } from './modules/bills/due.ts';
import { bills } from './modules/bills/model.ts';
import { backfillInvoicesDue, backfillSubscriptionInvoicesDue, watchIndexedDays } from './modules/invoices/due.ts';
import { salesDocuments } from './lib/sales-document.ts';
import { owned } from './modules/index.ts';
import { documents } from './modules/documents/model.ts';

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
  return {
    id: i._id, kind: i.kind, name: i.name, sku: i.sku, unit: i.unit, price: i.price, currency: i.currency, taxRatePpm: i.tax_rate_ppm, status: i.status,
    priceWithTax: priceLine(1, i.price, 0, [], i.tax_rate_ppm, '/price').total,
  };
}


const invoice = entityResolvers(invoices, invoiceNode);
const item = entityResolvers(items, itemNode);

/**
 * The invoices (finance) subgraph: its modules' manifests, the graph fields of invoices and items,
 * and the built-in e-invoicing sandbox at POST /einvoicing/sandbox.
 */
export const { name, reads, tools, typeDefs, createServer } = defineSubgraph({
  name: 'invoices',
  owned,
  schema: new URL('../schema.graphql', import.meta.url),
  resolvers: {
    Query: {
      invoice: invoice.byId,
      // crm reads the supplier of a document it is asked to create (parties.create_from_document): one read by _id.
      documentSupplier: async (_: unknown, args: { id: string }, ctx: SubgraphContext) => {
        const d = await documents(ctx.db).findOne({ _id: args.id, workspace: ctx.workspace }, { supplier_pending: 1, status: 1 }).lean();
        const s = d?.status === 'failed' ? d.supplier_pending : null;
        return s ? { documentId: args.id, taxIdType: s.tax_id.type, taxIdNumber: s.tax_id.number, checkDigit: s.tax_id.check_digit, name: s.name, email: s.email } : null;
      },
      // crm shows on a deal what finance made from it: the quote by its unique deal key, then what it became by id.
      dealDocuments: async (_: unknown, args: { dealId: string }, ctx: SubgraphContext) => {
        const quote = await salesDocuments(ctx.db).findOne({ deal_key: `${ctx.workspace}|${args.dealId}`, workspace: ctx.workspace }).lean();
        if (!quote) return null;
        const doc = (d: { _id: string; status: string; total: number; currency: string; number?: string | null }) => ({ id: d._id, number: d.number ?? null, status: d.status, total: d.total, currency: d.currency });
        let order = quote.converted_to?.kind === 'sales_order' ? await salesDocuments(ctx.db).findOne({ _id: quote.converted_to.id, workspace: ctx.workspace }).lean() : null;
        const invoiceId = quote.converted_to?.kind === 'invoice' ? quote.converted_to.id : order?.converted_to?.kind === 'invoice' ? order.converted_to.id : null;
        const inv = invoiceId ? await invoices(ctx.db).findOne({ _id: invoiceId, workspace: ctx.workspace }).lean() : null;
        order ??= null;
        return { quote: doc(quote), salesOrder: order ? doc(order) : null, invoice: inv ? doc(inv) : null };
      },
      invoices: async (_: unknown, args: { status?: string; customerId?: string; limit?: number }, ctx: SubgraphContext) => {
        const match = args.status || args.customerId ? (i: InvoiceDoc) => (!args.status || i.status === args.status) && (!args.customerId || i.customer_id === args.customerId) : undefined;
        const page = await pageNewestFirst<InvoiceDoc>(invoices(ctx.db), { workspace: ctx.workspace, limit: clampLimit(args.limit), match });
        return page.rows.map(invoiceNode);
      },
      bookingInvoice: async (_: unknown, args: { bookingId: string }, ctx: SubgraphContext) => {
        // Projects asks after each booking change: its feed grew (modules/invoices/bookings.ts).
        if (ctx.principal.actor.type === 'service' && ctx.principal.actor.id === 'projects') bookingInvoicing.wake(ctx.workspace);
        const inv = await invoices(ctx.db).findOne({ _id: bookingInvoiceId(args.bookingId), workspace: ctx.workspace }, { status: 1, number: 1 }).lean();
        return inv ? { id: inv._id, status: inv.status, number: inv.number ?? null } : null;
      },
      closedPeriods: (_: unknown, args: { from: string }, ctx: SubgraphContext) => {
        // Inventory asks before every movement: its feed is about to grow (modules/journal/inventory_pull_job.ts).
        if (ctx.principal.actor.type === 'service' && ctx.principal.actor.id === 'inventory') inventoryPull.wake(ctx.workspace);
        return closedMonthsFrom(ctx.db, ctx.workspace, args.from);
      },
      payrollJournalGrew: (_: unknown, _args: unknown, ctx: SubgraphContext) => {
        // Payroll's hint after it publishes (payroll journal_feed.ts): at most a wake, in this process's memory.
        if (ctx.principal.actor.type !== 'service' || ctx.principal.actor.id !== 'payroll') throw new CuadraError('policy_denied', 'Only the payroll service tells finance its journal feed grew.');
        payrollPull.wake(ctx.workspace);
        return true;
      },
      billStatus: async (_: unknown, args: { id: string }, ctx: SubgraphContext) => {
        // Inventory's repair of stale holds asks it (inventory finance_documents.ts): nobody else needs a bill's status this way.
        if (ctx.principal.actor.type !== 'service' || ctx.principal.actor.id !== 'inventory') throw new CuadraError('policy_denied', 'Only the inventory service asks a bill\'s status this way; read bills through the bills source.');
        return (await bills(ctx.db).findOne({ _id: args.id, workspace: ctx.workspace }, { status: 1 }).lean())?.status ?? null;
      },
      items: async (_: unknown, args: { search?: string; limit?: number }, ctx: SubgraphContext) => {
        const text = args.search?.toLowerCase();
        const page = await pageNewestFirst<ItemDoc>(items(ctx.db), { workspace: ctx.workspace, limit: clampLimit(args.limit), match: text ? (i) => itemMatches(i, text) : undefined });
        return page.rows.map(itemNode);
      },
    },
    Invoice: invoice.reference,
    Item: item.reference,
  },
  async prepare(server, deps) {
    // The books accept the journal source kinds the modules declare (books/sources.ts).
    declareJournalSources(owned.journalSources);
    const migrated = await migrateRatesToPpm(deps.db);
    if (migrated > 0) deps.log.info({ migrated }, 'rates stored in basis points converted to parts per million');
    const runHolds = await migrateRunHolds(deps.db);
    if (runHolds > 0) deps.log.info({ runHolds }, 'bills of approved payment runs held for their bank file');
    const backfilled = await backfillLedgerRollups(deps.db);
    if (backfilled > 0) deps.log.info({ backfilled }, 'journal entries written before the statement rollups counted in them');
    // The leaders top-N reads use (books/party-leaders.ts), for the days and months written before them.
    const leaders = await backfillLeaders(deps.db);
    if (leaders > 0) deps.log.info({ leaders }, 'top-N leaders built for days and months written before they were kept');
    // E-invoicing secrets written in plain text before they were sealed (CONTRACT §9).
    const sealed = await sealPlainSettings(deps.db);
    if (sealed > 0) deps.log.info({ sealed }, 'e-invoicing technical keys and software PINs sealed at rest');
    const indexed = await backfillBillsDue(deps.db);
    if (indexed > 0) deps.log.info({ indexed }, 'open bills indexed by due date for the payables lane');
    const indexedInvoices = await backfillInvoicesDue(deps.db);
    if (indexedInvoices > 0) deps.log.info({ indexed: indexedInvoices }, 'open invoices indexed by due date for the receivables lane');
    await watchIndexedDays(deps.db);
    const indexedSubscriptionInvoices = await backfillSubscriptionInvoicesDue(deps.db);
    if (indexedSubscriptionInvoices > 0) deps.log.info({ indexed: indexedSubscriptionInvoices }, 'open subscription invoices indexed by due day for the dunning sweep');
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
  },
});
