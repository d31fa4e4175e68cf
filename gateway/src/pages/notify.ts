import type { Governance, Logger, Principal } from '@cuadra/shared';
import type { PeopleStore } from '../identity/people.ts';
import type { IdentityStore } from '../identity/store.ts';
import type { Mailer } from '../mail.ts';
import type { InvokePipeline } from '../pipeline.ts';
import { describeCall, wantedBy, type Names, type Wanted } from './describe.ts';
import { translator, type MessageKey } from './i18n.ts';

const ID = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * When a call is held (202), the workspace's owners are e-mailed a link to it in the inbox
 * (when e-mail is configured): what was asked in words, by whom, the policy that held it and
 * when it expires — in each owner's language (es-CO unless they chose English). Never the
 * input itself (a held call's secrets are sealed; the e-mail says what, not with which values).
 * Runs after the answer, never delaying or failing the call; a failed send is logged.
 */
export function heldCallNotifier(deps: { governance: Governance; people: PeopleStore; identity: IdentityStore; mailer: Mailer; publicUrl: string; log: Logger; pipeline: () => InvokePipeline }) {
  return (principal: Principal, approvalId: string): void => {
    void (async () => {
      const approval = await deps.governance.approvals.get(principal.workspace, approvalId);
      if (!approval || approval.status !== 'pending') return;
      const owners = await deps.people.ownersOf(principal.workspace);
      if (owners.length === 0) return;
      const workspace = (await deps.identity.workspace(principal.workspace))?.name ?? principal.workspace;
      // Names for the sentence, read as the caller that asked (bounded: the few ids one call names).
      const wanted: Wanted = { parties: new Set(), invoices: new Set(), bills: new Set() };
      wantedBy(approval.tool, approval.input, wanted);
      const names: Names = { parties: new Map(), invoices: new Map(), bills: new Map() };
      const reads: Promise<void>[] = [];
      const read = (tool: string, id: string, pick: (o: Record<string, any>) => string | undefined, into: Map<string, string>) => {
        if (!ID.test(id) || reads.length >= 10) return;
        reads.push(deps.pipeline().invokeReadAs(principal, tool, { id }).then((o) => { const n = pick(o); if (n) into.set(id, n); }, () => undefined));
      };
      for (const id of wanted.parties) read('parties.get', id, (o) => o.party?.name, names.parties);
      for (const id of wanted.invoices) read('invoices.get', id, (o) => o.invoice?.number ?? undefined, names.invoices);
      for (const id of wanted.bills) read('bills.get', id, (o) => o.bill?.number ?? undefined, names.bills);
      await Promise.all(reads);
      const key = approval.requested_by.type === 'agent' || approval.requested_by.type === 'api_key' ? await deps.identity.apiKeyView(principal.workspace, approval.requested_by.id).catch(() => null) : null;
      const link = `${deps.publicUrl}/app/approvals?ws=${encodeURIComponent(principal.workspace)}#${approvalId}`;
      for (const owner of owners) {
        const t = translator(owner.locale === 'en' ? 'en' : 'es-CO');
        const type = ['agent', 'api_key', 'oauth_app', 'member', 'service', 'visitor'].includes(approval.requested_by.type) ? approval.requested_by.type : 'other';
        const label = key?.name ? `${key.name} (${approval.requested_by.id})` : approval.requested_by.id;
        const who = type === 'other' ? t.t('actor.other', { type: approval.requested_by.type, id: label }) : t.t(`actor.${type}` as MessageKey, { id: label });
        await deps.mailer.send({
          to: owner.email,
          subject: t.t('mail.held.subject', { workspace }),
          text: t.t('mail.held.text', {
            who: who.charAt(0).toUpperCase() + who.slice(1), what: describeCall(t, approval.tool, approval.input, names), tool: approval.tool,
            policy: approval.policy?.name ?? t.t('inbox.policy.unknown'), expires: t.dateTime(approval.expires_at), link,
          }),
        });
      }
    })().catch((err: unknown) => deps.log.error({ err }, 'held call e-mail failed'));
  };
}
