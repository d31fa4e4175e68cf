import { containsText, CuadraError, type RecordsQuery } from '@cuadra/shared';
import { INVITATIONS, MEMBERSHIPS } from '../../identity/people.ts';
import type { GatewayReadContext } from '../reads.ts';
import { peopleServices } from '../services.ts';
import { pageSegments, type Segment } from '../segments.ts';

/** The statuses of the `members` source: those `members.list` shows. */
export const MEMBER_STATUSES = ['active', 'invited'] as const;

/** Rows of a records page when the query names no limit, as every records source (composite.ts). */
const DEFAULT_LIMIT = 8;

/**
 * Records source `members` (specification §2.5): the rows of `members.list` — members
 * (`status: "active"`, newest first), then the pending invitations (`status: "invited"`, newest
 * first) — each with an `id` (the user's, or the invitation's) for the canvas to select by.
 * `status` narrows to one of the two; `search` looks in name and e-mail. No `total`: pending
 * invitations expire, so no count of them is kept on write.
 */
export async function membersSource(query: RecordsQuery, ctx: GatewayReadContext): Promise<{ rows: Record<string, unknown>[]; next_cursor?: string }> {
  const { people } = peopleServices(ctx);
  if (query.status !== undefined && !(MEMBER_STATUSES as readonly string[]).includes(query.status)) {
    throw new CuadraError('invalid_input', `"${query.status}" is not a status of members (${MEMBER_STATUSES.join(', ')}).`, { field: '/status' });
  }
  const active: Segment<Record<string, unknown>> = {
    series: MEMBERSHIPS,
    read: async (cursor, limit) => {
      const page = await people.memberPage(ctx.workspace, { cursor, limit });
      return { ...page, rows: page.rows.map((m) => ({ id: m.user_id, ...m, status: 'active' })) };
    },
  };
  const invited: Segment<Record<string, unknown>> = {
    series: INVITATIONS.series,
    read: async (cursor, limit) => {
      const page = await people.invitationPage(ctx.workspace, { cursor, limit });
      return { ...page, rows: page.rows.map((i) => ({ id: i.invitation_id, ...i, user_id: null, status: 'invited' })) };
    },
  };
  const segments = query.status === 'active' ? [active] : query.status === 'invited' ? [invited] : [active, invited];
  const page = await pageSegments(ctx.workspace, segments, query.cursor, query.limit ?? DEFAULT_LIMIT);
  // Names and e-mails live with the person, not the membership: the page is filtered once read (it may come out short).
  const text = query.search?.toLowerCase();
  return text ? { ...page, rows: page.rows.filter((r) => containsText(r.name, text) || containsText(r.email, text)) } : page;
}
