import { clampLimit, defineSubgraph, nodeById, pageNewestFirst, type SubgraphContext } from '@cuadra/shared';
import { projects, type ProjectDoc } from './modules/projects/model.ts';
import { tasks, type TaskDoc } from './modules/tasks/model.ts';
import { owned } from './modules/index.ts';
import { bookingPageRoutes } from './modules/bookings/page.ts';

function projectNode(p: ProjectDoc) {
  return { id: p._id, key: p.key, name: p.name, description: p.description, columns: p.columns, createdAt: p.created_at.toISOString() };
}

function taskNode(t: TaskDoc) {
  return {
    id: t._id, ref: t.ref, title: t.title, description: t.description, column: t.column, dueDate: t.due_date,
    assigneeEmail: t.assignee_email, priority: t.priority, createdAt: t.created_at.toISOString(),
    // Not in the schema: lets Task.project find its parent.
    projectId: t.project_id,
  };
}


const findProject = nodeById(projects, projectNode);
const findTask = nodeById(tasks, taskNode);

/** The projects subgraph: its modules' manifests, and the graph fields of projects and tasks. */
export const { name, reads, tools, typeDefs, createServer } = defineSubgraph({
  name: 'projects',
  owned,
  schema: new URL('../schema.graphql', import.meta.url),
  resolvers: {
    Query: {
      project: (_: unknown, args: { id: string }, ctx: SubgraphContext) => findProject(args.id, ctx),
      projects: async (_: unknown, args: { limit?: number }, ctx: SubgraphContext) => {
        const page = await pageNewestFirst<ProjectDoc>(projects(ctx.db), { workspace: ctx.workspace, limit: clampLimit(args.limit) });
        return page.rows.map(projectNode);
      },
      tasks: async (_: unknown, args: { projectId?: string; limit?: number }, ctx: SubgraphContext) => {
        const match = args.projectId ? (t: TaskDoc) => t.project_id === args.projectId : undefined;
        const page = await pageNewestFirst<TaskDoc>(tasks(ctx.db), { workspace: ctx.workspace, limit: clampLimit(args.limit), match });
        return page.rows.map(taskNode);
      },
    },
    Project: {
      // Entities are resolved within the caller's workspace only: an id from another
      // workspace resolves to null, never to that workspace's data.
      __resolveReference: (ref: { id: string }, ctx: SubgraphContext) => findProject(ref.id, ctx),
      tasks: async (project: { id: string }, args: { column?: string; limit?: number }, ctx: SubgraphContext) => {
        const match = (t: TaskDoc) => t.project_id === project.id && (!args.column || t.column === args.column);
        const page = await pageNewestFirst<TaskDoc>(tasks(ctx.db), { workspace: ctx.workspace, limit: clampLimit(args.limit), match });
        return page.rows.map(taskNode);
      },
    },
    Task: {
      __resolveReference: (ref: { id: string }, ctx: SubgraphContext) => findTask(ref.id, ctx),
      project: (task: { projectId: string }, _: unknown, ctx: SubgraphContext) => findProject(task.projectId, ctx),
    },
  },
  async prepare(server, deps) {
    // The public booking page, which the gateway forwards /book/<workspace slug>/<type> to.
    server.app.use(bookingPageRoutes(deps.db, deps.log));
  },
});
