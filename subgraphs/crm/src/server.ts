import { clampLimit, defineSubgraph, entityResolvers, pageNewestFirst, type SubgraphContext } from '@cuadra/shared';
import { owned } from './modules/index.ts';
import { deals } from './modules/deals/model.ts';
import { dealIdForLead } from './modules/deals/tools/create_from_lead.ts';
import { activities } from './modules/activities/model.ts';
import { bookingActivityId, bookingPull } from './modules/activities/bookings.ts';
import { isKind, parties, partyMatches, partyView, type PartyDoc } from './modules/parties/model.ts';

function partyNode(p: PartyDoc) {
  const v = partyView(p);
  const f = v.fiscal;
  const fiscal = f ? {
    personType: f.person_type, legalName: f.legal_name, responsibilities: f.responsibilities, taxScheme: f.tax_scheme,
    address: f.address ? { line: f.address.line, municipalityCode: f.address.municipality_code, municipality: f.address.municipality, departmentCode: f.address.department_code, department: f.address.department, postalCode: f.address.postal_code, country: f.address.country } : null,
  } : null;
  return { ...v, fiscal, taxId: p.tax_id ? `${p.tax_id.number}${p.tax_id.check_digit === null ? '' : `-${p.tax_id.check_digit}`}` : null, taxIdentity: p.tax_id ? { type: p.tax_id.type, number: p.tax_id.number, checkDigit: p.tax_id.check_digit ?? null } : null, createdAt: v.created_at };
}

const party = entityResolvers(parties, partyNode);

/** The crm subgraph: its modules' manifests, and the graph fields of the parties other services reference. */
export const { name, reads, tools, typeDefs, createServer } = defineSubgraph({
  name: 'crm',
  owned,
  schema: new URL('../schema.graphql', import.meta.url),
  resolvers: {
    Query: {
      party: party.byId,
      // Finance makes a quote from a deal (quotes.create_from_deal): one read by _id.
      dealForQuote: async (_: unknown, args: { id: string }, ctx: SubgraphContext) => {
        const d = await deals(ctx.db).findOne({ _id: args.id, workspace: ctx.workspace }).lean();
        return d ? {
          id: d._id, title: d.title, partyId: d.party_id, currency: d.currency, status: d.status,
          lines: d.lines.map((l) => ({ description: l.description, quantity: l.quantity, unitPrice: l.unit_price, discountBps: l.discount_bps, taxRatePpm: l.tax_rate_ppm, itemId: l.item_id })),
        } : null;
      },
      // Marketing records a lead's consent on the party crm made of it (deals.create_from_lead): one read of the leads' deals by _id.
      leadParties: async (_: unknown, args: { leadIds: string[] }, ctx: SubgraphContext) => {
        const ids = args.leadIds.slice(0, 100);
        const made = await deals(ctx.db).find({ _id: { $in: ids.map(dealIdForLead) }, workspace: ctx.workspace }, { _id: 1, party_id: 1 }).lean();
        return made.filter((d) => d.party_id).map((d) => ({ leadId: d._id.slice('dl_'.length), partyId: d.party_id, dealId: d._id }));
      },
      // Finance reads the party of a booking it invoices; projects asks after each booking change, the hint that crm's pull should run now (activities/bookings.ts).
      bookingActivity: async (_: unknown, args: { bookingId: string }, ctx: SubgraphContext) => {
        if (ctx.principal.actor.type === 'service' && ctx.principal.actor.id === 'projects') bookingPull.wake(ctx.workspace);
        const a = await activities(ctx.db).findOne({ _id: bookingActivityId(args.bookingId), workspace: ctx.workspace }, { party_id: 1, booking: 1 }).lean();
        return a?.party_id && a.booking ? { activityId: a._id, partyId: a.party_id, bookingStatus: a.booking.status, bookingRev: a.booking.rev } : null;
      },
      // Finance finds a supplier of an uploaded e-invoice by its NIT: the unique tax_key, one indexed read.
      partyByTaxId: async (_: unknown, args: { type: string; number: string }, ctx: SubgraphContext) => {
        const p = await parties(ctx.db).findOne({ tax_key: `${ctx.workspace}:${args.type}:${args.number}`, workspace: ctx.workspace }).lean();
        return p ? partyNode(p) : null;
      },
      // The marketing audience (email_campaigns): the parties list's own paging, so 10,000 parties are read a page at a time.
      partiesPage: async (_: unknown, args: { kind?: string | null; tags?: string[] | null; fields?: Record<string, unknown> | null; cursor?: string | null; limit?: number | null }, ctx: SubgraphContext) => {
        const tags = args.tags ?? [];
        const fields = args.fields && typeof args.fields === 'object' ? Object.entries(args.fields) : [];
        const match = (p: PartyDoc) => p.status === 'active' && (!args.kind || isKind(p, args.kind)) && tags.every((t) => p.tags.includes(t))
          // Custom field values (crm_fields) where the party carries them; a party without the field does not match.
          && fields.every(([k, v]) => (p as { custom?: Record<string, unknown> }).custom?.[k] === v);
        const page = await pageNewestFirst<PartyDoc>(parties(ctx.db), { workspace: ctx.workspace, cursor: args.cursor ?? undefined, limit: clampLimit(args.limit, 100), match });
        return { rows: page.rows.map(partyNode), nextCursor: page.next_cursor ?? null };
      },
      // The same tests as parties.list and the parties source (kind customer/vendor include both).
      parties: async (_: unknown, args: { search?: string; kind?: string; limit?: number }, ctx: SubgraphContext) => {
        const text = args.search?.toLowerCase();
        const match = args.kind || text ? (p: PartyDoc) => (!args.kind || isKind(p, args.kind)) && (!text || partyMatches(p, text)) : undefined;
        const page = await pageNewestFirst<PartyDoc>(parties(ctx.db), { workspace: ctx.workspace, limit: clampLimit(args.limit), match });
        return page.rows.map(partyNode);
      },
    },
    Party: party.reference,
  },
});
