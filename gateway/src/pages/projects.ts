import type { Principal } from '@cuadra/shared';
import { boardPage, type BoardPageDeps, type BoardRead } from './board-page.ts';
import type { Router } from 'express';
import type { MessageKey, Translator } from './i18n.ts';

/** A task as tasks.list answers it (the fields the board shows). */
interface TaskRow { id: string; ref: string; title: string; column: string; sort_key: string; due_date: string | null; assignee_email: string | null; priority: string; checklist: { done: boolean }[] }
interface ProjectRow { id: string; key: string; name: string; columns: string[] }

/** Tasks shown per board (pages of 100 read through the pipeline); the rest are counted as more. */
const PAGES = 5;

/** The projects the person reads, and the chosen one (`wanted`, else the newest). */
async function chosenProject(deps: BoardPageDeps, principal: Principal, wanted: string): Promise<ProjectRow> {
  const list = await deps.pipeline.invokeReadAs(principal, 'projects.list', { limit: 100 }) as { rows: ProjectRow[] };
  const project = list.rows.find((p) => p.id === wanted) ?? list.rows[0];
  if (!project) throw Object.assign(new Error('no project'), { code: 'not_found' });
  return project;
}

/** The project's tasks by column, each column in its board order (the tasks' fractional keys). */
async function tasksOf(deps: BoardPageDeps, principal: Principal, project: string): Promise<{ rows: TaskRow[]; more: boolean }> {
  const rows: TaskRow[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < PAGES; i++) {
    const page = await deps.pipeline.invokeReadAs(principal, 'tasks.list', { project_id: project, limit: 100, ...(cursor ? { cursor } : {}) }) as { rows: TaskRow[]; next_cursor?: string };
    rows.push(...page.rows);
    cursor = page.next_cursor;
    if (!cursor) return { rows, more: false };
  }
  return { rows, more: true };
}

/** The board of one project: a column per status (the project's columns, in order), its tasks as cards. */
async function readProjectBoard(deps: BoardPageDeps, principal: Principal, wanted: string, t: Translator): Promise<BoardRead> {
  const project = await chosenProject(deps, principal, wanted);
  const { rows } = await tasksOf(deps, principal, project.id);
  const last = project.columns[project.columns.length - 1];
  const today = new Date().toISOString().slice(0, 10);
  return {
    heading: t.t('projects.heading', { project: project.name }),
    which: project.id,
    view: {
      label: t.t('projects.board', { project: project.name }),
      columns: project.columns.map((name) => {
        const cards = rows.filter((r) => r.column === name).sort((a, b) => (a.sort_key < b.sort_key ? -1 : a.sort_key > b.sort_key ? 1 : 0));
        return {
          id: name, title: name, summary: t.t(cards.length === 1 ? 'projects.summary.one' : 'projects.summary', { count: cards.length }), more: 0,
          cards: cards.map((c) => {
            const done = c.checklist.filter((x) => x.done).length;
            return {
              id: c.id, title: `${c.ref} · ${c.title}`,
              // A calendar date (YYYY-MM-DD) is that day wherever it is read: noon in Bogotá keeps it from moving.
              flag: c.due_date && c.due_date < today && name !== last ? t.t('projects.overdue') : undefined,
              details: [
                c.assignee_email ?? t.t('projects.unassigned'),
                c.due_date ? t.t('projects.due', { date: t.date(`${c.due_date}T12:00:00-05:00`) }) : '',
                c.checklist.length ? t.t('projects.checklist', { done, count: c.checklist.length }) : '',
                t.t(`projects.priority.${c.priority}` as MessageKey),
              ].filter(Boolean),
            };
          }),
        };
      }),
    },
  };
}

/**
 * `/app/projects`: a project's task board (the newest project, or `?project=<id>`), a column per
 * status, each task a card that moves by drag and drop, by keyboard or by its form — `tasks.move`
 * through the pipeline as the signed-in person (the CRM board's component and page).
 */
export function projectPages(deps: BoardPageDeps): Router {
  return boardPage({
    key: 'projects', title: 'projects.title', param: { name: 'project', pattern: /^[A-Za-z0-9_-]{1,64}$/ },
    move: { moveTool: 'tasks.move', columnArg: 'column', placeArgs: { after: 'after_id', before: 'before_id' } },
    // A project's columns are names (tasks.move: 1–60 characters).
    column: /^[^\u0000-\u001f\u007f]{1,60}$/,
    read: readProjectBoard,
    moveInput: (id, column) => ({ id, column }),
    moved: 'projects.moved', refused: 'projects.refused',
    cannotRead: (t, code) => t.t(code === 'not_found' ? 'projects.none' : 'projects.cannotRead', { code }),
  }, deps);
}
