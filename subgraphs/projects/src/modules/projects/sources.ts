import { CuadraError, decodeCursor, defineSource, encodeCursor, type ListAnswer, pageNewestFirst, type Positioned, type SourceReader } from '@cuadra/shared';
import { byIds } from '../../calendar/day-index.ts';
import { tasks, type TaskDoc } from '../tasks/model.ts';
import { projectByKey, projectMatches, projects, type ProjectDoc } from './model.ts';

function projectRow(p: ProjectDoc) {
  return { id: p._id, key: p.key, name: p.name, description: p.description, columns: p.columns, created_at: p.created_at.toISOString() };
}

/** Refuses a field a source does not take, with its pointer (specification §2.5). */
function refuse(field: 'kind' | 'ref' | 'status', message: string): never {
  throw new CuadraError('invalid_input', message, { field: `/${field}` });
}

const projectsPage = defineSource<ProjectDoc>({ model: projects, search: projectMatches, row: projectRow });

/**
 * records.list `projects`: newest first, by cursor (CONTRACT §9; `total` only without search);
 * search the name, key or description, as projects.list does. No kind, ref or status.
 */
export const projectsSource: SourceReader = (q, ctx) => {
  if (q.kind !== undefined) refuse('kind', 'The source projects takes no kind.');
  if (q.ref !== undefined) refuse('ref', 'Projects take no ref.');
  if (q.status !== undefined) refuse('status', 'Projects have no status.');
  return projectsPage(q, ctx);
};

/**
 * Slots of the column cursor per project position: a cursor names (project position, column
 * index) as one number. A board has at most 20 columns (projects.create).
 */
const COLUMN_SLOTS = 64;
/** The series the column cursors are signed for (a projects cursor is not accepted here, nor the reverse). */
const COLUMNS_SERIES = 'project_columns';

/** Where a page of columns starts: this project position, from this column index. */
interface ColumnPlace { pos: number; index: number }

function columnCursor(workspace: string, place: ColumnPlace): string {
  return encodeCursor(COLUMNS_SERIES, workspace, place.pos * COLUMN_SLOTS + place.index);
}

function columnPlace(workspace: string, cursor: string): ColumnPlace {
  const n = decodeCursor(COLUMNS_SERIES, workspace, cursor);
  return { pos: Math.floor(n / COLUMN_SLOTS), index: n % COLUMN_SLOTS };
}

type Board = ProjectDoc & Positioned;
type ColumnRow = { id: string; project_id: string; project_key: string; column: string; position: number; tasks: number };

/**
 * records.list `project_columns`: one row per column of each project, in board order, newest
 * project first, with its task count; `ref` a project key (default all); `search` the column
 * name; `status` is ignored (specification §2.5). Paged by cursor like every list (CONTRACT §9):
 * a page reads at most `limit` projects, so it is bounded whatever the workspace holds; with a
 * search it may be short, even empty, and still carry next_cursor. `total` is given without
 * search when it is known without counting: the columns of the one project `ref` names, or the
 * rows of a first page that is also the last.
 */
export const projectColumnsSource: SourceReader = async (q, ctx) => {
  if (q.kind !== undefined) refuse('kind', 'The source project_columns takes no kind.');
  const { db, workspace } = ctx;
  const limit = Math.min(Math.max(Math.trunc(q.limit ?? 8), 1), 100);
  const from = q.cursor !== undefined ? columnPlace(workspace, q.cursor) : undefined;
  const search = q.search?.toLowerCase();

  let boards: Board[];
  let more: ColumnPlace | undefined;
  if (q.ref !== undefined) {
    const board = await projectByKey(db, workspace, q.ref);
    if (from && from.pos !== board.pos) throw new CuadraError('invalid_input', 'The cursor is not one this list gave out: pass next_cursor from the previous page unchanged, or omit it for the first page.', { field: '/cursor' });
    boards = [board];
  } else {
    // Projects at or below the cursor's position: a projects cursor continues below the position it names.
    const model = projects(db);
    const start = from ? encodeCursor(model.collection.collectionName, workspace, from.pos + 1) : undefined;
    const page = await pageNewestFirst<Board>(model, { workspace, cursor: start, limit });
    boards = page.rows;
    if (page.next_cursor) more = { pos: decodeCursor(model.collection.collectionName, workspace, page.next_cursor) - 1, index: 0 };
  }

  const picked: Omit<ColumnRow, 'tasks'>[] = [];
  let next: ColumnPlace | undefined;
  walk: for (const p of boards) {
    for (let index = from && p.pos === from.pos ? from.index : 0; index < p.columns.length; index++) {
      const column = p.columns[index];
      if (search && !column.toLowerCase().includes(search)) continue;
      if (picked.length === limit) {
        next = { pos: p.pos, index };
        break walk;
      }
      picked.push({ id: `${p.key}:${column}`, project_id: p._id, project_key: p.key, column, position: index });
    }
  }
  next ??= more;
  // Task counts from each board's own task ids (read by _id), never by counting the collection.
  const counted = new Map<string, Map<string, number>>();
  for (const p of boards.filter((b) => picked.some((c) => c.project_id === b._id))) {
    const perColumn = new Map<string, number>();
    for (const t of await byIds<TaskDoc>(tasks(db), workspace, p.task_ids ?? [])) if (t.project_id === p._id) perColumn.set(t.column, (perColumn.get(t.column) ?? 0) + 1);
    counted.set(p._id, perColumn);
  }
  const counts = picked.map((c) => counted.get(c.project_id)?.get(c.column) ?? 0);
  const answer: ListAnswer<Record<string, unknown>> = { rows: picked.map((c, i) => ({ ...c, tasks: counts[i] })) };
  if (!search && q.ref !== undefined) answer.total = boards[0].columns.length;
  else if (!search && !from && !next) answer.total = picked.length;
  if (next) answer.next_cursor = columnCursor(workspace, next);
  return answer;
};
