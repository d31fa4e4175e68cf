import { compileValidator, createAjv, CuadraError, escapeRegex, RECORDS_QUERY_FIELDS } from '@cuadra/shared';
import type { Connection } from 'mongoose';
import { projects, type ProjectDoc } from '../models/project.ts';
import { tasks, type TaskDoc } from '../models/task.ts';

/** The records sources this subgraph answers for `records.list`, with the tool module each belongs to (its read guard). */
const PROJECT_SOURCES: Record<string, 'projects' | 'tasks'> = { projects: 'projects', project_tasks: 'tasks', project_columns: 'projects' };

/** The module a source's rows belong to; `projects` for anything else (refused after the guard). */
export function sourceModule(source: unknown): 'projects' | 'tasks' {
  return typeof source === 'string' && Object.hasOwn(PROJECT_SOURCES, source) ? PROJECT_SOURCES[source] : 'projects';
}

/** Throws `invalid_input` with a JSON Pointer when a records source object (§2.5) does not fit. */
export const validateRecordsQuery = compileValidator(createAjv(), {
  type: 'object', additionalProperties: false, required: ['source'],
  properties: { source: { type: 'string', minLength: 1, maxLength: 64 }, ...RECORDS_QUERY_FIELDS },
});

export interface RecordsQuery { source: string; limit?: number; search?: string; kind?: string; status?: string; ref?: string }
type Answer = { source: string; rows: Record<string, unknown>[]; total: number };

/** Columns of every project are read from at most this many projects (newest first) when no ref names one. */
const MAX_PROJECTS_FOR_COLUMNS = 500;

function projectRow(p: ProjectDoc) {
  return { id: p._id, key: p.key, name: p.name, description: p.description, columns: p.columns, created_at: p.created_at.toISOString() };
}

function taskRow(t: TaskDoc) {
  return {
    id: t._id, ref: t.ref, project_id: t.project_id, project_key: t.ref.slice(0, t.ref.lastIndexOf('-')), title: t.title, column: t.column,
    priority: t.priority, due_date: t.due_date, assignee_email: t.assignee_email, created_at: t.created_at.toISOString(),
  };
}

async function projectByKey(db: Connection, workspace: string, key: string): Promise<ProjectDoc> {
  const p = await projects(db).findOne({ workspace, key }).lean();
  if (!p) throw new CuadraError('not_found', `No project with key ${key} exists in this workspace.`);
  return p;
}

/**
 * `records.list` for the projects sources: `{source, rows, total}`.
 * - projects: newest first; `search` the name, key or description. No status, kind or ref.
 * - project_tasks: newest first; `ref` a project key (default all projects); `status` a column
 *   name (exact); `search` the title, reference (WEB-12), description or assignee e-mail.
 * - project_columns: one row per column of each project, in board order (newest project
 *   first), with its task count; `ref` a project key (default all); `search` the column name;
 *   `status` is ignored (specification §2.5).
 * None of them takes a kind.
 */
export async function projectsRecords(db: Connection, workspace: string, q: RecordsQuery): Promise<Answer> {
  if (!Object.hasOwn(PROJECT_SOURCES, q.source)) throw new CuadraError('invalid_input', `The projects subgraph does not answer the source "${q.source}".`, { field: '/source' });
  if (q.kind !== undefined) throw new CuadraError('invalid_input', `The source ${q.source} takes no kind.`, { field: '/kind' });
  const limit = q.limit ?? 8;
  const text = q.search ? escapeRegex(q.search.toLowerCase()) : null;

  if (q.source === 'projects') {
    if (q.ref !== undefined) throw new CuadraError('invalid_input', 'Projects take no ref.', { field: '/ref' });
    if (q.status !== undefined) throw new CuadraError('invalid_input', 'Projects have no status.', { field: '/status' });
    const filter: Record<string, unknown> = { workspace };
    if (text) filter.$or = [{ name_lc: { $regex: text } }, { key: { $regex: text, $options: 'i' } }, { description: { $regex: text, $options: 'i' } }];
    const model = projects(db);
    const [rows, total] = await Promise.all([model.find(filter).sort({ created_at: -1, _id: -1 }).limit(limit).lean(), model.countDocuments(filter)]);
    return { source: q.source, rows: rows.map(projectRow), total };
  }

  if (q.source === 'project_tasks') {
    const filter: Record<string, unknown> = { workspace };
    if (q.ref !== undefined) filter.project_id = (await projectByKey(db, workspace, q.ref))._id;
    if (q.status !== undefined) filter.column = q.status;
    if (text) {
      filter.$or = [
        { title: { $regex: text, $options: 'i' } }, { ref: { $regex: text, $options: 'i' } },
        { description: { $regex: text, $options: 'i' } }, { assignee_email: { $regex: text, $options: 'i' } },
      ];
    }
    const model = tasks(db);
    const [rows, total] = await Promise.all([model.find(filter).sort({ created_at: -1, _id: -1 }).limit(limit).lean(), model.countDocuments(filter)]);
    return { source: q.source, rows: rows.map(taskRow), total };
  }

  // project_columns
  const boards = q.ref !== undefined
    ? [await projectByKey(db, workspace, q.ref)]
    : await projects(db).find({ workspace }, { key: 1, columns: 1, created_at: 1 }).sort({ created_at: -1, _id: -1 }).limit(MAX_PROJECTS_FOR_COLUMNS).lean();
  const search = q.search?.toLowerCase();
  const all = boards.flatMap((p) => p.columns.map((column, position) => ({ project_id: p._id, project_key: p.key, column, position })))
    .filter((c) => !search || c.column.toLowerCase().includes(search));
  const page = all.slice(0, limit);
  const counts = await Promise.all(page.map((c) => tasks(db).countDocuments({ workspace, project_id: c.project_id, column: c.column })));
  const rows = page.map((c, i) => ({ id: `${c.project_key}:${c.column}`, ...c, tasks: counts[i] }));
  return { source: q.source, rows, total: all.length };
}
