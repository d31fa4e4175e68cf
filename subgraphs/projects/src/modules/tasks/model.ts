import { addPositions, containsText, DATE_TIME_SCHEMA as DATE_TIME, NULLABLE_TEXT_SCHEMA as NULLABLE_TEXT, TEXT_SCHEMA as TEXT, modelOn } from '@cuadra/shared';
import { Schema, type Connection, type Model } from 'mongoose';

/** Task priorities, lowest first. */
export const PRIORITIES = ['low', 'normal', 'high', 'urgent'] as const;

/** One step of a task's checklist. */
export interface ChecklistItem { text: string; done: boolean }

/** A task as stored. `_id` is our own prefixed string id (`tsk_…`), never a Mongo ObjectId. */
export interface TaskDoc {
  _id: string;
  /** Every read and write filters on this: the workspace seal. */
  workspace: string;
  project_id: string;
  /** Position in the project's sequence (1, 2, …); unique within the project. */
  number: number;
  /**
   * `KEY-number`, written once at creation so lists need no lookup of the project; a project's
   * key is therefore fixed once it has tasks.
   */
  ref: string;
  title: string;
  description: string | null;
  /** One of the project's columns at the time it was written. */
  column: string;
  /** A calendar date (YYYY-MM-DD), not an instant; the agenda's `tasks` lane reads it. */
  due_date: string | null;
  assignee_email: string | null;
  priority: (typeof PRIORITIES)[number];
  /**
   * The task's place in its column: a fractional-indexing key, so a move writes this one task only.
   * Absent on tasks made before keys (they sort first, by number).
   */
  order_key?: string;
  /** Steps of the task, in order. */
  checklist?: ChecklistItem[];
  /** Raised by every change: a move or update is one conditional write on it. */
  rev?: number;
  created_at: Date;
  updated_at: Date;
}

const taskSchema = new Schema<TaskDoc>(
  {
    _id: { type: String, required: true },
    workspace: { type: String, required: true },
    project_id: { type: String, required: true },
    number: { type: Number, required: true },
    ref: { type: String, required: true },
    title: { type: String, required: true },
    description: { type: String, default: null },
    column: { type: String, required: true },
    due_date: { type: String, default: null },
    assignee_email: { type: String, default: null },
    priority: { type: String, required: true, default: 'normal' },
    order_key: { type: String },
    checklist: { type: [{ _id: false, text: String, done: Boolean }], default: undefined },
    rev: { type: Number },
    created_at: { type: Date, required: true },
    updated_at: { type: Date, required: true },
  },
  { versionKey: false },
);
taskSchema.index({ workspace: 1, project_id: 1, created_at: -1 });
taskSchema.index({ workspace: 1, due_date: 1 });
taskSchema.index({ project_id: 1, number: 1 }, { unique: true });
// Lists page newest first by position (CONTRACT §9).
addPositions(taskSchema);

/** The project tasks collection on this subgraph's connection (records source `project_tasks`). */
export function tasks(db: Connection): Model<TaskDoc> {
  return modelOn<TaskDoc>(db, 'Task', taskSchema, 'project_tasks');
}


/** JSON Schema of {@link taskView}: what every tool answering a task gives. */
export const TASK_VIEW_SCHEMA = {
  type: 'object', additionalProperties: false,
  required: ['id', 'project_id', 'number', 'ref', 'title', 'description', 'column', 'sort_key', 'due_date', 'assignee_email', 'priority', 'checklist', 'created_at', 'updated_at'],
  properties: {
    id: TEXT,
    project_id: TEXT,
    number: { type: 'integer', minimum: 1 },
    ref: TEXT,
    title: TEXT,
    description: NULLABLE_TEXT,
    column: TEXT,
    sort_key: TEXT,
    due_date: { anyOf: [{ type: 'string', format: 'date' }, { type: 'null' }] },
    assignee_email: NULLABLE_TEXT,
    priority: { enum: [...PRIORITIES] },
    checklist: {
      type: 'array',
      items: { type: 'object', additionalProperties: false, required: ['text', 'done'], properties: { text: TEXT, done: { type: 'boolean' } } },
    },
    created_at: DATE_TIME,
    updated_at: DATE_TIME,
  },
} as const;

/** The public shape of a task (tool output). */
export function taskView(t: TaskDoc) {
  return {
    id: t._id,
    project_id: t.project_id,
    number: t.number,
    ref: t.ref,
    title: t.title,
    description: t.description,
    column: t.column,
    sort_key: t.order_key ?? '',
    due_date: t.due_date,
    assignee_email: t.assignee_email,
    priority: t.priority,
    checklist: (t.checklist ?? []).map((c) => ({ text: c.text, done: c.done })),
    created_at: t.created_at.toISOString(),
    updated_at: t.updated_at.toISOString(),
  };
}

/** What tasks.list and the `project_tasks` records source filter tasks by (each optional). */
export interface TaskFilter {
  projectId?: string;
  /** A column name, exactly. */
  column?: string;
  /** Due strictly before this date (YYYY-MM-DD); tasks without a due date are left out. */
  dueBefore?: string;
  /** A lower-cased search term: the title, reference (WEB-12), description or assignee e-mail. */
  search?: string;
}

/** The test of a task filter, or undefined when it filters nothing: one test for the list tool and the records source. */
export function taskMatcher(f: TaskFilter): ((t: TaskDoc) => boolean) | undefined {
  const { projectId, column, dueBefore, search } = f;
  if (!projectId && column === undefined && !dueBefore && !search) return undefined;
  return (t) => (!projectId || t.project_id === projectId)
    && (column === undefined || t.column === column)
    && (!dueBefore || (t.due_date !== null && t.due_date < dueBefore))
    && (!search || containsText(t.title, search) || containsText(t.ref, search) || containsText(t.description, search) || containsText(t.assignee_email, search));
}
