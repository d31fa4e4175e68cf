import { decodeCursor, encodeCursor } from '@cuadra/shared';

/**
 * One series of a records source read as several series one after the other (members, then the
 * pending invitations; custom roles, then the built-in ones): a newest-first page of its own.
 */
export interface Segment<R> {
  /** The series its cursors are signed for: how a cursor given back is told to belong here. */
  series: string;
  /**
   * Up to `limit` rows below the cursor (from the top without one); `last` is the position of
   * the last row read, `next_cursor` is given when more of this series may follow.
   */
  read(cursor: string | undefined, limit: number): Promise<{ rows: R[]; last?: number; next_cursor?: string }>;
}

function belongsTo(series: string, workspace: string, cursor: string): boolean {
  try {
    decodeCursor(series, workspace, cursor);
    return true;
  } catch {
    return false;
  }
}

/**
 * One bounded page over segments read in order (CONTRACT §9): the segment a cursor was signed
 * for continues below it, and a page that runs out of one segment goes on with the next from its
 * top. A page that fills up exactly at a segment's last row carries a cursor below that row, so
 * the next page finds the following segments; that page may be empty, which bounded lists allow.
 */
export async function pageSegments<R>(workspace: string, segments: readonly Segment<R>[], cursor: string | undefined, limit: number): Promise<{ rows: R[]; next_cursor?: string }> {
  let first = 0;
  if (cursor) {
    first = segments.findIndex((s) => belongsTo(s.series, workspace, cursor));
    // A cursor of none of them: the paging's own refusal (invalid_input at /cursor).
    if (first < 0) decodeCursor(segments[0].series, workspace, cursor);
  }
  const rows: R[] = [];
  for (let i = first; i < segments.length; i++) {
    const page = await segments[i].read(i === first ? cursor : undefined, limit - rows.length);
    rows.push(...page.rows);
    if (page.next_cursor) return { rows, next_cursor: page.next_cursor };
    if (rows.length >= limit) {
      const more = i < segments.length - 1 && page.last !== undefined;
      return more ? { rows, next_cursor: encodeCursor(segments[i].series, workspace, page.last!) } : { rows };
    }
  }
  return { rows };
}
