import { containsText, CuadraError, type ListAnswer, listNewestFirst, readModule, type RecordsQuery } from '@cuadra/shared';
import type { Connection } from 'mongoose';
import { projects, type ProjectDoc } from '../models/project.ts';
import { tasks, type TaskDoc } from '../models/task.ts';
import { owned } from '../modules/index.ts';

/** The records sources this subgraph answers for `records.list`, with the tool module each belongs to (its read guard). */
const PROJECT_SOURCES = owned.reads.sources ?? {};

/** The module a source's rows belong to; `projects` for anything else (refused after the guard). */
export function sourceModule(source: unknown): string {
  return readModule(PROJECT_SOURCES, source, 'projects');
}

export { validateRecordsQuery } from '@cuadra/shared';
export type { RecordsQuery } from '@cuadra/shared';
type Answer = { source: string } & ListAnswer<Record<string, unknown>>;

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
 * `records.list` for the projects sources: `{source, rows, total?, next_cursor?}`.
 * - projects: newest first, by cursor (CONTRACT §9; `total` only without search); `search` the name, key or description. No status, kind or ref.
 * - project_tasks: newest first, by cursor (`total` only without filters); `ref` a project key (default all projects); `status` a column
 *   name (exact); `search` the title, reference (WEB-12), description or assignee e-mail.
 * - project_columns: one row per column of each project, in board order (newest project
 *   first), with its task count; `ref` a project key (default all); `search` the column name;
 *   `status` is ignored (specification §2.5). Not paged: a cursor is refused.
 * None of them takes a kind.
 */
export async function projectsRecords(db: Connection, workspace: string, q: RecordsQuery): Promise<Answer> {
  if (!Object.hasOwn(PROJECT_SOURCES, q.source)) throw new CuadraError('invalid_input', `The projects subgraph does not answer the source "${q.source}".`, { field: '/source' });
  if (q.kind !== undefined) throw new CuadraError('invalid_input', `The source ${q.source} takes no kind.`, { field: '/kind' });
  const limit = q.limit ?? 8;
  const text = q.search ? q.search.toLowerCase() : null;

  if (q.source === 'projects') {
    if (q.ref !== undefined) throw new CuadraError('invalid_input', 'Projects take no ref.', { field: '/ref' });
    if (q.status !== undefined) throw new CuadraError('invalid_input', 'Projects have no status.', { field: '/status' });
    const match = text ? (p: ProjectDoc) => p.name_lc.includes(text) || containsText(p.key, text) || containsText(p.description, text) : undefined;
    return { source: q.source, ...(await listNewestFirst<ProjectDoc, Record<string, unknown>>(projects(db), { workspace, cursor: q.cursor, limit, match }, projectRow)) };
  }

  if (q.source === 'project_tasks') {
    const projectId = q.ref !== undefined ? (await projectByKey(db, workspace, q.ref))._id : undefined;
    const column = q.status;
    const match = projectId || column !== undefined || text
      ? (t: TaskDoc) => (!projectId || t.project_id === projectId) && (column === undefined || t.column === column)
        && (!text || containsText(t.title, text) || containsText(t.ref, text) || containsText(t.description, text) || containsText(t.assignee_email, text))
      : undefined;
    return { source: q.source, ...(await listNewestFirst<TaskDoc, Record<string, unknown>>(tasks(db), { workspace, cursor: q.cursor, limit, match }, taskRow)) };
  }

  // project_columns
  if (q.cursor !== undefined) throw new CuadraError('invalid_input', 'Project columns come in one page; they take no cursor.', { field: '/cursor' });
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
