import { CuadraError, defineSubgraph, entityResolvers, type SubgraphContext } from '@cuadra/shared';
import { owned } from './modules/index.ts';
import { emailCampaigns, campaignView, type CampaignDoc } from './modules/email_campaigns/model.ts';
import { readAllMailboxes } from './modules/email_campaigns/mailbox.ts';
import { CampaignSender } from './modules/email_campaigns/sender.ts';
import { spendByCampaign } from './modules/marketing_ad_accounts/spend.ts';
import { siteLeadNode } from './modules/sites/lead-consents.ts';
import { siteLoginRoutes } from './modules/sites/login.ts';
import { siteRoutes } from './modules/sites/public.ts';
import { publicRoutes } from './public.ts';

const campaign = entityResolvers<CampaignDoc>(emailCampaigns, (c) => {
  const v = campaignView(c);
  return { id: v.id, name: v.name, status: v.status, sendAt: v.send_at, rowsTotal: v.rows_total };
});

/** The marketing subgraph: its modules' manifests, the campaign sender, the bounce mailbox reader and the public link endpoints. */
export const { name, reads, tools, typeDefs, createServer } = defineSubgraph({
  name: 'marketing',
  owned,
  schema: new URL('../schema.graphql', import.meta.url),
  resolvers: {
    Query: {
      emailCampaign: campaign.byId,
      // finance reads an ad account's spend to book it as expenses (bills.create_from_ad_spend): a read in the caller's workspace.
      adSpend: async (_: unknown, args: { accountId: string; from: string; to: string }, ctx: SubgraphContext) => {
        if (![args.from, args.to].every((d) => /^\d{4}-\d{2}-\d{2}$/.test(d))) throw new CuadraError('invalid_input', 'from and to are dates YYYY-MM-DD.', { field: '/from' });
        const s = await spendByCampaign(ctx.db, ctx.workspace, args.accountId, args.from, args.to);
        return s ? { accountId: s.account.id, accountName: s.account.name, platform: s.account.platform, currency: s.account.currency, total: s.total, campaigns: s.campaigns } : null;
      },
      // crm reads a lead to make its party and deal (deals.create_from_lead): two reads by _id in the caller's workspace.
      siteLead: (_: unknown, args: { id: string }, ctx: SubgraphContext) => siteLeadNode(ctx.db, ctx.workspace, args.id),
    },
    EmailCampaign: campaign.reference,
  },
  async prepare(server, deps) {
    const now = () => new Date();
    server.app.use(publicRoutes(deps.db, deps.log, now));
    server.app.use(siteLoginRoutes(deps.db, deps.log, now));
    server.app.use(siteRoutes(deps.db, deps.log, now, deps.peers));
    // Background work runs in the service (tests that drive it by hand pass runApprovals: false).
    if (deps.runApprovals === false) return;
    const sender = new CampaignSender(deps.db, deps.log);
    sender.start();
    let reading = false;
    const mailboxes = setInterval(() => {
      if (reading) return;
      reading = true;
      // A pass that fails (the database away) is tried again next time; unhandled, it ended the process.
      void readAllMailboxes(deps.db, deps.log).catch((err: unknown) => deps.log.warn({ err }, 'reading the mailboxes failed; will retry')).finally(() => { reading = false; });
    }, Number(process.env.MARKETING_MAILBOX_INTERVAL_MS) > 0 ? Number(process.env.MARKETING_MAILBOX_INTERVAL_MS) : 10_000);
    mailboxes.unref();
    const stop = server.stop.bind(server);
    server.stop = async () => {
      clearInterval(mailboxes);
      await sender.stop();
      await stop();
    };
  },
});
