import { canonicalJson, sha256 } from './governance/digest.ts';
import type { Ledger, LedgerEntry } from './governance/ledger.ts';
import type { Principal } from './principal.ts';

/**
 * Things that happen to a workspace's records without anyone calling a tool (a due date passing),
 * recorded on the workspace's hash-chained ledger as entries of a system principal, so they are
 * tamper-evident, counted in `activity`, and what agents' triggers and webhooks follow. Each type
 * is declared here once, with the module that owns it: only that module's background work can
 * record it ({@link systemEventsFor}).
 */
export const DOMAIN_EVENTS = {
  'invoice.overdue': {
    module: 'invoices',
    description: 'An invoice (or debit note) still open after its due date: once per invoice and due date (a due date moved later and passed again is a new event).',
  },
  'subscription.dunning': {
    module: 'plans',
    description: 'A plan subscription\'s unpaid invoice moved a dunning step: reminder, second_reminder, suspended (no new invoices), or reactivated once paid. Once per subscription, invoice, due date and step.',
  },
} as const;

/** A domain event type (`invoice.overdue`). */
export type DomainEventType = keyof typeof DOMAIN_EVENTS;

/** The domain event types, for schemas (`enum`). */
export const DOMAIN_EVENT_TYPES = Object.keys(DOMAIN_EVENTS) as DomainEventType[];

/** A flat payload: what the event is about, small enough for a ledger entry and a webhook body. */
export type DomainEventData = Record<string, string | number | boolean | null>;

/** What a module asks to record. */
export interface DomainEventInput {
  workspace: string;
  type: DomainEventType;
  /** The record the event is about (`inv_…`). */
  subject: string;
  /**
   * What makes this occurrence one (the invoice's due date): the entry's id is derived from
   * (workspace, type, subject, key), so recording it again — a second sweep at the same time, a
   * retry after a crash — finds the entry already in the chain and appends nothing.
   */
  key: string;
  data: DomainEventData;
}

/** The narrow capability a module's maintenance hook gets: record its own events, nothing else. */
export interface SystemEvents {
  /** Records the event once; answers its entry (the one already stored when it was recorded before). */
  record(event: DomainEventInput): Promise<LedgerEntry>;
}

/** The ledger id of an event occurrence: the same inputs always name the same entry. */
export function domainEventId(workspace: string, type: string, subject: string, key: string): string {
  return `evt_${sha256(canonicalJson([workspace, type, subject, key])).slice(0, 40)}`;
}

/** The system principal a subgraph's module records its events as (no person, no key: it decides nothing). */
export function systemPrincipal(workspace: string, subgraph: string, module: string): Principal {
  return { workspace, role: 'system', actor: { type: 'service', id: `${subgraph}.${module}` }, credential_id: `system:${subgraph}`, scopes: [], patterns: [], person: null };
}

/**
 * The {@link SystemEvents} of one module of a subgraph: refuses a type the module does not own
 * (DOMAIN_EVENTS), so a hook can record only what its module is the source of.
 */
export function systemEventsFor(ledger: Ledger, subgraph: string, module: string): SystemEvents {
  return {
    async record(event) {
      const declared = (DOMAIN_EVENTS as Record<string, { module: string }>)[event.type];
      if (!declared || declared.module !== module) throw new Error(`The module ${module} does not own the event ${event.type}.`);
      const id = domainEventId(event.workspace, event.type, event.subject, event.key);
      const stored = await ledger.entries.findById(id, { _id: 0 }).lean();
      if (stored) return stored;
      return ledger.append({
        id, principal: systemPrincipal(event.workspace, subgraph, module), tool: event.type, module, risk: null,
        input_digest: sha256(canonicalJson(event.data)), outcome: 'ok', duration_ms: 0,
        event: { subject: event.subject, key: event.key, data: event.data },
      });
    },
  };
}
