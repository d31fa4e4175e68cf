import { addDays, calendarDays, readByKeys, type AgendaEntry, type LaneReader } from '@cuadra/shared';
import { ACTIVITY_DUE, activities, dueId, type ActivityDoc } from './model.ts';

const KIND: Record<ActivityDoc['kind'], string> = { call: 'reminder', meeting: 'meeting', task: 'deadline', note: 'event', email: 'reminder' };

/**
 * crm's part of the agenda's `events` lane: open activities due in the window (and, with
 * `overdue`, those due up to 90 days before it and still open), read through the due-day index by
 * `_id`. Projects will add calendar events to the same lane from its own subgraph; the gateway
 * merges the parts by date.
 */
export const activitiesLane: LaneReader = async (w, ctx) => {
  const from = w.overdue ? addDays(w.from, -90) : w.from;
  const days = await readByKeys<{ _id: string; ids?: string[] }>(ctx.db, ACTIVITY_DUE, '_id', calendarDays(from, w.to).map((d) => dueId(ctx.workspace, d)));
  const ids = [...new Set(days.flatMap((d) => d.ids ?? []))];
  const found: ActivityDoc[] = [];
  for (let i = 0; i < ids.length; i += 200) found.push(...await activities(ctx.db).find({ _id: { $in: ids.slice(i, i + 200) } }).lean());
  return found
    .filter((a) => a.workspace === ctx.workspace && a.status === 'open' && a.due_date && a.due_date <= w.to && (a.due_date >= w.from || w.overdue))
    .sort((a, b) => (a.due_date! < b.due_date! ? -1 : a.due_date! > b.due_date! ? 1 : (a.due_time ?? '') < (b.due_time ?? '') ? -1 : 1))
    .slice(0, w.limit)
    .map((a): AgendaEntry => ({
      date: a.due_date!, kind: KIND[a.kind], source: 'events', title: a.subject, ref: { type: 'activity', id: a._id },
      activity: a.kind, ...(a.due_time ? { time: a.due_time } : {}), deal_id: a.deal_id, party_id: a.party_id, overdue: a.due_date! < w.from,
    }));
};
