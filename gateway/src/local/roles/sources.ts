import { containsText, countFromCounter, decodeCursor, encodeCursor, type ListAnswer, type RecordsQuery } from '@cuadra/shared';
import { builtInRoles, type RoleView } from '../../identity/roles.ts';
import type { GatewayReadContext } from '../reads.ts';
import { gatewayServices } from '../services.ts';
import { pageSegments, type Segment } from '../segments.ts';

/** Rows of a records page when the query names no limit, as every records source (composite.ts). */
const DEFAULT_LIMIT = 8;

/** The cursor series of the built-in roles: six fixed rows, positioned 6 (owner) down to 1. */
const BUILT_IN_SERIES = 'roles:built_in';

function matches(role: Pick<RoleView, 'key' | 'name'>, text: string | undefined): boolean {
  return !text || containsText(role.key, text) || containsText(role.name, text);
}

/**
 * Records source `roles` (specification §2.5): the rows of `roles.list` — the custom roles newest
 * first, then the built-in ones, which are older than any (`built_in: true`, owner first) — each
 * with an `id` (its key) for the canvas to select by. `search` looks in key and name; roles have
 * no status, so `status` is ignored (as for any source without one). `total` (custom and
 * built-in) only without a search.
 */
export async function rolesSource(query: RecordsQuery, ctx: GatewayReadContext): Promise<ListAnswer<Record<string, unknown>>> {
  const { roles } = gatewayServices(ctx).identity;
  const text = query.search?.toLowerCase();
  const custom: Segment<RoleView> = {
    series: roles.model.collection.collectionName,
    read: (cursor, limit) => roles.customPage(ctx.workspace, { cursor, limit, match: text ? (r) => matches(r, text) : undefined }),
  };
  const builtIn: Segment<RoleView> = {
    series: BUILT_IN_SERIES,
    read: async (cursor, limit) => {
      const all = builtInRoles();
      const below = cursor ? decodeCursor(BUILT_IN_SERIES, ctx.workspace, cursor) : all.length + 1;
      const positioned = all.map((role, i) => ({ role, pos: all.length - i })).filter((r) => r.pos < below && matches(r.role, text));
      const taken = positioned.slice(0, limit);
      const last = taken.at(-1)?.pos;
      return { rows: taken.map((r) => r.role), last, ...(positioned.length > limit ? { next_cursor: encodeCursor(BUILT_IN_SERIES, ctx.workspace, last!) } : {}) };
    },
  };
  const page = await pageSegments(ctx.workspace, [custom, builtIn], query.cursor, query.limit ?? DEFAULT_LIMIT);
  const answer: ListAnswer<Record<string, unknown>> = { ...page, rows: page.rows.map((r) => ({ id: r.key, ...r })) };
  if (!text) answer.total = (await countFromCounter(roles.model.db, custom.series, ctx.workspace)) + builtInRoles().length;
  return answer;
}
