import { clampLimit, createSubgraphServer, pageNewestFirst, subgraphTypeDefs, type SubgraphContext, type SubgraphDeps, type SubgraphServer } from '@cuadra/shared';
import { projects, type ProjectDoc } from './modules/projects/model.ts';
import { tasks, type TaskDoc } from './modules/tasks/model.ts';
import { owned } from './modules/index.ts';

/** Subgraph name: its database, its tool mutation and its entry in the supergraph. */
export const name = 'projects';

/** The composite reads this subgraph answers (the build writes them into the catalog; the gateway routes by them). */
export const reads = owned.reads;

/** Every tool this subgraph owns: the sum of its modules' manifests (src/modules/). */
export const tools = owned.tools;

/** The SDL this subgraph serves (schema.graphql + the shared tool mutation). */
export function typeDefs(): string {
  return subgraphTypeDefs(name, new URL('../schema.graphql', import.meta.url), owned.readers);
}

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


async function findProject(id: string, ctx: SubgraphContext) {
  const p = await projects(ctx.db).findOne({ _id: id, workspace: ctx.workspace }).lean();
  return p ? projectNode(p) : null;
}

async function findTask(id: string, ctx: SubgraphContext) {
  const t = await tasks(ctx.db).findOne({ _id: id, workspace: ctx.workspace }).lean();
  return t ? taskNode(t) : null;
}

/** Builds the projects service, ready to listen. */
export function createServer(deps: SubgraphDeps): Promise<SubgraphServer> {
  return createSubgraphServer(
    {
      name,
      ...owned,
      typeDefs: typeDefs(),
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
    },
    deps,
  );
}
