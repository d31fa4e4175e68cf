import { addPositions, containsText, CuadraError, DATE_TIME_SCHEMA as DATE_TIME, type Positioned, TEXT_SCHEMA as TEXT, modelOn } from '@cuadra/shared';
import { generateNKeysBetween } from 'fractional-indexing';
import { Schema, type Connection, type Model } from 'mongoose';

/** Tasks a project holds at most (its board is read whole). */
export const MAX_TASKS = 5000;

/** Columns a project gets when it names none. */
export const DEFAULT_COLUMNS = ['To do', 'Doing', 'Done'] as const;

/** A project as stored. `_id` is our own prefixed string id (`prj_…`), never a Mongo ObjectId. */
export interface ProjectDoc {
  _id: string;
  /** Every read and write filters on this: the workspace seal. */
  workspace: string;
  name: string;
  /** Lower-cased name, for case-insensitive search without a collation. */
  name_lc: string;
  /** Short upper-case code, unique per workspace: people and agents refer to tasks as KEY-12. */
  key: string;
  description: string | null;
  /**
   * The board's columns in display order; a task sits in exactly one. Kept inside the project
   * so a project and its columns change in one atomic write.
   */
  columns: string[];
  /**
   * The fractional order key of each column (fractional-indexing, same index as `columns`, ascending):
   * moving or adding a column writes only its own key. Absent on boards made before keys.
   */
  column_keys?: string[];
  /**
   * The ids of the project's tasks (at most {@link MAX_TASKS}), pushed in the same write that hands out
   * the task's number: the board is read by `_id` from here, never by scanning the tasks.
   */
  task_ids?: string[];
  /** Last task number handed out; raised with `$inc`, so concurrent tasks never share a number. */
  task_seq: number;
  created_at: Date;
  updated_at: Date;
}

const projectSchema = new Schema<ProjectDoc>(
  {
    _id: { type: String, required: true },
    workspace: { type: String, required: true },
    name: { type: String, required: true },
    name_lc: { type: String, required: true },
    key: { type: String, required: true },
    description: { type: String, default: null },
    columns: { type: [String], required: true },
    column_keys: { type: [String], default: undefined },
    task_ids: { type: [String], default: undefined },
    task_seq: { type: Number, required: true, default: 0 },
    created_at: { type: Date, required: true },
    updated_at: { type: Date, required: true },
  },
  { versionKey: false },
);
projectSchema.index({ workspace: 1, created_at: -1 });
projectSchema.index({ workspace: 1, key: 1 }, { unique: true });
// Lists page newest first by position (CONTRACT §9).
addPositions(projectSchema);

/** The projects collection on this subgraph's connection. */
export function projects(db: Connection): Model<ProjectDoc> {
  return modelOn<ProjectDoc>(db, 'Project', projectSchema, 'projects');
}


/** JSON Schema of {@link projectView}: what every tool answering a project gives. */
export const PROJECT_VIEW_SCHEMA = {
  type: 'object', additionalProperties: false,
  required: ['id', 'key', 'name', 'description', 'columns', 'created_at', 'updated_at'],
  properties: {
    id: TEXT,
    key: TEXT,
    name: TEXT,
    description: { type: ['string', 'null'] },
    columns: { type: 'array', items: TEXT },
    created_at: DATE_TIME,
    updated_at: DATE_TIME,
  },
} as const;

/** The public shape of a project (tool output). */
export function projectView(p: ProjectDoc) {
  return {
    id: p._id,
    key: p.key,
    name: p.name,
    description: p.description,
    columns: p.columns,
    created_at: p.created_at.toISOString(),
    updated_at: p.updated_at.toISOString(),
  };
}

/**
 * Whether a project matches a lower-cased search term: its name, key or description. projects.list
 * and the `projects` records source search the same way.
 */
export function projectMatches(p: ProjectDoc, needle: string): boolean {
  return p.name_lc.includes(needle) || containsText(p.key, needle) || containsText(p.description, needle);
}

/** The project of this workspace with a key (a records query's `ref`); `not_found` when there is none. */
export async function projectByKey(db: Connection, workspace: string, key: string): Promise<ProjectDoc & Positioned> {
  const p = await projects(db).findOne({ workspace, key }).lean<ProjectDoc & Positioned>();
  if (!p) throw new CuadraError('not_found', `No project with key ${key} exists in this workspace.`);
  return p;
}

/** A board column: its name, its fractional order key, and whether tasks in it are closed (the last column). */
export interface BoardColumn { name: string; key: string; done: boolean }

/** The project's columns in order with their keys (keys made for boards written before them). */
export function boardColumns(p: Pick<ProjectDoc, 'columns' | 'column_keys'>): BoardColumn[] {
  const keys = p.column_keys?.length === p.columns.length ? p.column_keys : generateNKeysBetween(null, null, p.columns.length);
  return p.columns.map((name, i) => ({ name, key: keys[i], done: i === p.columns.length - 1 }));
}
