import { CuadraError, TOOL_PATTERN } from '@cuadra/shared';
import { privateOutboundAllowed } from '@cuadra/shared/outbound';
import { outboundUrlProblem } from '../../lib/outbound.ts';
import { EVENT_TYPES } from './model.ts';

/** The fields webhooks.create and webhooks.update share. */
export const WEBHOOK_FIELDS = {
  url: { type: 'string', minLength: 8, maxLength: 2000, description: 'The HTTPS endpoint the messages are POSTed to (a public address).' },
  events: { type: 'array', minItems: 1, maxItems: EVENT_TYPES.length, uniqueItems: true, items: { enum: [...EVENT_TYPES] }, description: 'ledger.action: actions recorded on the ledger (filtered by tools); approval.decided: a person approved or rejected a held call; agent_run.finished: an agent run ended; invoice.overdue: an invoice still open after its due date (once per invoice and due date).' },
  tools: { type: 'array', minItems: 1, maxItems: 100, uniqueItems: true, items: { type: 'string', maxLength: 100, pattern: TOOL_PATTERN.source }, description: 'For ledger.action: the tools whose actions are sent, as patterns (invoices.% for a module, invoices.post, %:write); default every tool (%).' },
  description: { type: ['string', 'null'], maxLength: 500 },
} as const;

/**
 * The endpoint URL, or `invalid_input` at `field`: https (plain http only where private addresses
 * are allowed, i.e. a developer's machine and the tests), no credentials in it, and not a private
 * or loopback address (a name is checked again at every connection, by the delivery agent).
 */
export function checkEndpointUrl(raw: string, field: string): string {
  const problem = outboundUrlProblem(raw);
  if (problem) throw new CuadraError('invalid_input', `${raw.slice(0, 200)}: ${problem}`, { field });
  if (new URL(raw).protocol !== 'https:' && !privateOutboundAllowed()) throw new CuadraError('invalid_input', 'Webhook endpoints must be https URLs.', { field });
  return raw;
}
