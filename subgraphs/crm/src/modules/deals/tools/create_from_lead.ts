import { CuadraError, defineTool, type ToolContext } from '@cuadra/shared';
import { parties, partyView, PARTY_VIEW_SCHEMA, type PartyDoc } from '../../parties/model.ts';
import { partyForEmail } from '../../parties/by_email.ts';
import { findPipeline, readPipelines } from '../../pipelines/model.ts';
import { deals, dealView, DEAL_VIEW_SCHEMA, type DealDoc } from '../model.ts';
import { insertDeal } from '../ops.ts';

/** A site's lead as the marketing graph answers it (`siteLead`). */
interface SiteLead { id: string; siteName: string; pipeline: string | null; name: string | null; email: string; phone: string | null }

/** The deal made of a lead: its id follows from the lead's, so a second one cannot exist. */
export function dealIdForLead(leadId: string): string {
  return `dl_${leadId}`;
}

async function partyOf(ctx: Pick<ToolContext, 'db' | 'workspace'>, deal: DealDoc): Promise<PartyDoc> {
  const p = deal.party_id ? await parties(ctx.db).findOne({ _id: deal.party_id, workspace: ctx.workspace }).lean() : null;
  if (!p) throw new CuadraError('conflict', `The deal ${deal.title} made from this lead no longer names a party.`);
  return p;
}

/**
 * Makes the party and the deal of a site's lead (a visitor's form submission, issue 36), from the
 * lead read through the marketing graph (`siteLead`: the read-only service assertion; marketing keeps
 * the lead, crm writes only its own records). Once per lead, under retries, races and a crash between
 * the steps: the deal's id is derived from the lead's (a second insert fails at the unique `_id` and
 * answers the deal there, `created: false`); the party is the active one holding the lead's e-mail,
 * else a new one whose id is derived from the workspace and the e-mail (two leads of one visitor, or a
 * retry after the party was made and the deal was not, find it instead of making another). The
 * pipeline is checked before anything is written, so a refusal leaves nothing half-done. The visitor's
 * consent is not crm's: marketing records it on the party once it reads that the lead has one
 * (`leadParties`).
 */
export const createFromLead = defineTool({
  name: 'deals.create_from_lead',
  description: 'Turn a site\'s lead (a form submission: sites.leads lists them, lead_…) into a customer party (the one holding its e-mail, else a new one tagged from_site) and an open deal in the pipeline the site names (sites lead_pipeline; default the default pipeline), read from the lead, not typed again. Once per lead: called again, or concurrently, it answers the deal already made (created false). The visitor\'s marketing consent, if given on the form, is recorded on the party by marketing.',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['lead_id'],
    properties: { lead_id: { type: 'string', pattern: '^lead_[A-Za-z0-9_-]{1,36}$', description: 'The lead (lead_…), as sites.leads lists it.' } },
  },
  output: {
    type: 'object', additionalProperties: false, required: ['deal', 'party', 'created', 'party_created'],
    properties: {
      deal: DEAL_VIEW_SCHEMA, party: PARTY_VIEW_SCHEMA,
      created: { type: 'boolean', description: 'False when the lead\'s deal existed already: it is answered as it is.' },
      party_created: { type: 'boolean', description: 'True when this call made the party; false when a party already held the e-mail.' },
    },
  },
  async handler(input, ctx) {
    const dealId = dealIdForLead(input.lead_id);
    const known = await deals(ctx.db).findOne({ _id: dealId, workspace: ctx.workspace }).lean();
    if (known) return { deal: dealView(known), party: partyView(await partyOf(ctx, known)), created: false, party_created: false };
    if (!ctx.graph) throw new CuadraError('unavailable', 'The marketing service is not configured here; nothing was done.', { beforeAnyEffect: true });
    const data = await ctx.graph('marketing', 'query($id: ID!) { siteLead(id: $id) { id siteName pipeline name email phone } }', { id: input.lead_id })
      .catch((err: unknown) => {
        if (err instanceof CuadraError && err.code === 'unavailable') throw new CuadraError('unavailable', err.message, { beforeAnyEffect: true });
        throw err;
      });
    const lead = data.siteLead as SiteLead | null;
    if (!lead) throw new CuadraError('not_found', `No lead ${input.lead_id} exists in this workspace.`);
    // Checked before the party is made: a refusal leaves no party without its deal.
    const pipeline = findPipeline(await readPipelines(ctx.db, ctx.workspace), lead.pipeline);
    if (!pipeline || pipeline.status !== 'active') {
      throw new CuadraError('conflict', lead.pipeline
        ? `The site ${lead.siteName} sends its leads to the pipeline "${lead.pipeline}", which does not exist or is archived: create it, or choose another with sites.update (lead_pipeline). Nothing was created.`
        : 'This workspace has no pipeline yet: create one with pipelines.create. Nothing was created.');
    }

    const { party, created: partyCreated } = await partyForEmail(ctx, lead.email, () => ({ name: lead.name ?? lead.email, kind: 'customer', email: lead.email, ...(lead.phone && lead.phone.length >= 3 ? { phone: lead.phone } : {}), tags: ['from_site'] }));
    if (party.status !== 'active') throw new CuadraError('conflict', `The party ${party.name} made from an earlier lead of ${lead.email} is archived; restore it (parties.update) and try again. Nothing was created.`);

    try {
      const deal = await insertDeal(ctx, { title: `${lead.name ?? lead.email} · ${lead.siteName}`.slice(0, 200), party_id: party._id, pipeline: pipeline.id, tags: ['from_site'] }, { id: dealId });
      return { deal: dealView(deal), party: partyView(party), created: true, party_created: partyCreated };
    } catch (err) {
      // A concurrent call made the lead's deal first (the derived _id): answer that one.
      const raced = err instanceof CuadraError && err.code === 'conflict' ? await deals(ctx.db).findOne({ _id: dealId, workspace: ctx.workspace }).lean() : null;
      if (raced) return { deal: dealView(raced), party: partyView(await partyOf(ctx, raced)), created: false, party_created: partyCreated };
      throw err;
    }
  },
});
