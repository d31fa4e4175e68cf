import { createPositioned, CuadraError, DATE_SCHEMA, defineTool, newId, recordOutput } from '@cuadra/shared';
import { deals } from '../../deals/model.ts';
import { parties } from '../../parties/model.ts';
import { ACTIVITY_DUE, ACTIVITY_KINDS, ACTIVITY_VIEW_SCHEMA, activities, activityView, dueId, type ActivityDoc } from '../model.ts';

/** Logs or schedules an activity on a deal or a party; an open one with a due date shows in the agenda's events lane. */
export const create = defineTool({
  name: 'activities.create',
  description: 'Log or schedule an activity (call, meeting, task, note, e-mail) on a deal and/or a party, with a due date (and time) and notes. Open activities with a due date appear in the agenda\'s events lane; a note is recorded done. Logging on a deal counts as touching it (it stops rotting).',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['kind', 'subject'],
    properties: {
      kind: { enum: [...ACTIVITY_KINDS] },
      subject: { type: 'string', minLength: 1, maxLength: 200 },
      notes: { type: 'string', maxLength: 5000 },
      deal_id: { type: 'string', pattern: '^dl_[A-Za-z0-9_-]{1,40}$' },
      party_id: { type: 'string', pattern: '^pty_[A-Za-z0-9_-]{1,40}$' },
      owner_id: { type: 'string', minLength: 1, maxLength: 64 },
      due_date: DATE_SCHEMA,
      due_time: { type: 'string', pattern: '^([01]\\d|2[0-3]):[0-5]\\d$' },
      done: { type: 'boolean', description: 'Record it as already done (a call that just happened).' },
    },
    dependentRequired: { due_time: ['due_date'] },
  },
  output: recordOutput('activity', ACTIVITY_VIEW_SCHEMA),
  async handler(input, ctx) {
    if (!input.deal_id && !input.party_id) throw new CuadraError('invalid_input', 'An activity is about a deal or a party: give deal_id or party_id.', { field: '/deal_id' });
    let partyId = input.party_id ?? null;
    if (input.deal_id) {
      const deal = await deals(ctx.db).findOne({ _id: input.deal_id, workspace: ctx.workspace }, { party_id: 1 }).lean();
      if (!deal) throw new CuadraError('invalid_input', `No deal ${input.deal_id} exists in this workspace.`, { field: '/deal_id' });
      partyId ??= deal.party_id;
    }
    if (input.party_id && !(await parties(ctx.db).exists({ _id: input.party_id, workspace: ctx.workspace }))) {
      throw new CuadraError('invalid_input', `No party ${input.party_id} exists in this workspace.`, { field: '/party_id' });
    }
    const done = input.done === true || input.kind === 'note';
    const doc: ActivityDoc = {
      _id: newId('act'), workspace: ctx.workspace, kind: input.kind, subject: input.subject.trim(), notes: input.notes ?? null, deal_id: input.deal_id ?? null, party_id: partyId,
      owner_id: input.owner_id ?? null, due_date: input.due_date ?? null, due_time: input.due_time ?? null, status: done ? 'done' : 'open', done_at: done ? ctx.now : null,
      created_at: ctx.now, updated_at: ctx.now,
    };
    if (!done && doc.due_date) await ctx.db.collection(ACTIVITY_DUE).updateOne({ _id: dueId(ctx.workspace, doc.due_date) } as never, { $addToSet: { ids: doc._id } }, { upsert: true });
    await createPositioned(activities(ctx.db), doc);
    if (doc.deal_id) await deals(ctx.db).updateOne({ _id: doc.deal_id, workspace: ctx.workspace }, { $set: { updated_at: ctx.now } });
    return { activity: activityView(doc) };
  },
});
