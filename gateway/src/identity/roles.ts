import {
  addPositions, backfillPositions, BUILT_IN_ROLES, bumpVersion, createPositioned, CuadraError, currentVersion, DATE_TIME_SCHEMA as DATE_TIME, ensureModel, isBuiltInRole, type ListAnswer, listNewestFirst, newId, pageNewestFirst, type Page, type Positioned, patternsCover, type Principal, releasePosition, rolePatternsOf, modelOn } from '@cuadra/shared';
import type { Redis } from 'ioredis';
import { Schema, type Connection, type Model } from 'mongoose';

/** A workspace's own role (CONTRACT.md §4: "custom roles via `roles.*`"): a named set of tool patterns. */
export interface RoleDoc {
  _id: string;
  workspace: string;
  /** `^[a-z][a-z0-9_]{1,39}$`, never a built-in role's name; what memberships and keys store as `role`. */
  key: string;
  name: string;
  patterns: string[];
  created_at: Date;
  updated_at: Date;
}

/** The public shape of a role (`roles.list`). */
export interface RoleView {
  key: string;
  name: string;
  patterns: string[];
  built_in: boolean;
  created_at?: string;
  updated_at?: string;
}

export const ROLE_KEY = /^[a-z][a-z0-9_]{1,39}$/;

const roleSchema = new Schema<RoleDoc>(
  {
    _id: { type: String, required: true },
    workspace: { type: String, required: true },
    key: { type: String, required: true },
    name: { type: String, required: true },
    patterns: { type: [String], default: [] },
    created_at: { type: Date, required: true },
    updated_at: { type: Date, required: true },
  },
  { versionKey: false },
);
roleSchema.index({ workspace: 1, key: 1 }, { unique: true });
// roles.list pages the custom roles newest first by position (CONTRACT §9 bounded lists).
addPositions(roleSchema);

const versionKey = (workspace: string) => `cuadra:roles:${workspace}`;

const ROLE_FIELDS = {
  key: { type: 'string', pattern: ROLE_KEY.source },
  name: { type: 'string' },
  patterns: { type: 'array', items: { type: 'string' } },
} as const;

/** JSON Schema of a custom role's {@link RoleView} (`view`): `built_in: false`, with its dates. */
export const CUSTOM_ROLE_VIEW_SCHEMA = {
  type: 'object', additionalProperties: false,
  required: ['key', 'name', 'patterns', 'built_in', 'created_at', 'updated_at'],
  properties: { ...ROLE_FIELDS, built_in: { const: false }, created_at: DATE_TIME, updated_at: DATE_TIME },
} as const;

/** JSON Schema of a built-in role's {@link RoleView}: `built_in: true`, no dates. */
export const BUILT_IN_ROLE_VIEW_SCHEMA = {
  type: 'object', additionalProperties: false,
  required: ['key', 'name', 'patterns', 'built_in'],
  properties: { ...ROLE_FIELDS, key: { enum: Object.keys(BUILT_IN_ROLES) }, built_in: { const: true } },
} as const;

/** JSON Schema of any {@link RoleView} (`roles.list` rows). */
export const ROLE_VIEW_SCHEMA = { anyOf: [BUILT_IN_ROLE_VIEW_SCHEMA, CUSTOM_ROLE_VIEW_SCHEMA] } as const;

const view = (d: RoleDoc): RoleView => ({
  key: d.key, name: d.name, patterns: d.patterns, built_in: false, created_at: d.created_at.toISOString(), updated_at: d.updated_at.toISOString(),
});

/** Human names of the built-in roles (`roles.list`). */
const BUILT_IN_NAMES: Record<string, string> = { owner: 'Owner', admin: 'Admin', accountant: 'Accountant', member: 'Member', viewer: 'Viewer', agent: 'Agent' };

/** The built-in roles as `roles.list` shows them, owner first. */
export function builtInRoles(): RoleView[] {
  return Object.entries(BUILT_IN_ROLES).map(([key, patterns]) => ({ key, name: BUILT_IN_NAMES[key] ?? key, patterns: [...patterns], built_in: true }));
}

/**
 * Custom roles per workspace, in the gateway's database. Authentication resolves a custom role's
 * patterns here on every call through a per-process cache checked against a Redis version counter
 * per workspace (one GET per call with a custom role; none for built-in roles). `update` and
 * `delete` bump the counter, so every gateway instance sees a change on its next call.
 */
export class RoleStore {
  readonly model: Model<RoleDoc>;
  readonly #redis: Redis;
  readonly #cache = new Map<string, { version: string; roles: Map<string, string[]> }>();

  constructor(db: Connection, redis: Redis) {
    this.model = modelOn<RoleDoc>(db, 'Role', roleSchema, 'roles');
    this.#redis = redis;
  }

  async init(): Promise<void> {
    await ensureModel(this.model);
    await backfillPositions(this.model);
  }

  async #changed(workspace: string): Promise<void> {
    this.#cache.delete(workspace);
    await bumpVersion(this.#redis, versionKey(workspace));
  }

  /**
   * The patterns of a role in a workspace: a built-in role's own, a custom role's (fresh as of the
   * workspace's role version), or `null` when no such role exists there.
   */
  async patternsFor(workspace: string, role: string): Promise<string[] | null> {
    if (isBuiltInRole(role)) return [...BUILT_IN_ROLES[role]];
    // The version is read before the roles: a change in between only costs one more fetch.
    const version = await currentVersion(this.#redis, versionKey(workspace));
    let cached = this.#cache.get(workspace);
    if (!cached || cached.version !== version) {
      const docs = await this.model.find({ workspace }, { key: 1, patterns: 1 }).limit(1000).lean();
      cached = { version, roles: new Map(docs.map((d) => [d.key, d.patterns])) };
      if (this.#cache.size > 10_000) this.#cache.clear();
      this.#cache.set(workspace, cached);
    }
    return cached.roles.get(role) ?? null;
  }

  /** `role_patterns` for a principal: null for built-in roles, the custom role's patterns, `[]` (reaches nothing) for an unknown role. */
  async principalPatterns(workspace: string, role: string): Promise<string[] | null> {
    if (isBuiltInRole(role)) return null;
    return (await this.patternsFor(workspace, role)) ?? [];
  }

  /** One page: the built-in roles first (on the first page), then the custom ones newest first (bounded: positions). */
  async list(workspace: string, page: { limit: number; cursor?: string } = { limit: 100 }): Promise<ListAnswer<RoleView>> {
    const builtIn = page.cursor ? [] : builtInRoles();
    const custom = await listNewestFirst<RoleDoc, RoleView>(this.model, { workspace, limit: page.limit, cursor: page.cursor }, view);
    return { ...custom, rows: [...builtIn, ...custom.rows], ...(custom.total !== undefined ? { total: custom.total + Object.keys(BUILT_IN_ROLES).length } : {}) };
  }

  /**
   * One page of the custom roles by cursor, newest first, with the position of the last one read
   * (records source `roles`); `match` filters in memory (a short page may still carry a cursor).
   */
  async customPage(workspace: string, page: { limit: number; cursor?: string; match?: (role: RoleDoc) => boolean }): Promise<Page<RoleView> & { last?: number }> {
    const found = await pageNewestFirst<RoleDoc & Positioned>(this.model, { workspace, limit: page.limit, cursor: page.cursor, match: page.match });
    return { rows: found.rows.map(view), last: found.rows.at(-1)?.pos, ...(found.next_cursor ? { next_cursor: found.next_cursor } : {}) };
  }

  async get(workspace: string, key: string): Promise<RoleView | null> {
    if (isBuiltInRole(key)) return builtInRoles().find((r) => r.key === key)!;
    const doc = await this.model.findOne({ workspace, key }).lean();
    return doc ? view(doc) : null;
  }

  async create(workspace: string, input: { key: string; name: string; patterns: string[] }): Promise<RoleView> {
    if (isBuiltInRole(input.key)) throw new CuadraError('conflict', `"${input.key}" is a built-in role; choose another key.`);
    const now = new Date();
    const doc: RoleDoc = { _id: newId('rol'), workspace, key: input.key, name: input.name, patterns: input.patterns, created_at: now, updated_at: now };
    try {
      await createPositioned(this.model, doc);
    } catch (err) {
      if ((err as { code?: number }).code === 11000) throw new CuadraError('conflict', `The role "${input.key}" already exists in this workspace.`);
      throw err;
    }
    await this.#changed(workspace);
    return view(doc);
  }

  async update(workspace: string, key: string, change: { name?: string; patterns?: string[] }): Promise<RoleView | null> {
    const set: Partial<RoleDoc> = { updated_at: new Date() };
    if (change.name !== undefined) set.name = change.name;
    if (change.patterns !== undefined) set.patterns = change.patterns;
    const doc = await this.model.findOneAndUpdate({ workspace, key }, { $set: set }, { returnDocument: 'after' }).lean();
    if (doc) await this.#changed(workspace);
    return doc ? view(doc) : null;
  }

  async delete(workspace: string, key: string): Promise<boolean> {
    const res = await this.model.deleteOne({ workspace, key });
    if (res.deletedCount > 0) {
      await releasePosition(this.model.db, this.model.collection.collectionName, workspace);
      await this.#changed(workspace);
    }
    return res.deletedCount > 0;
  }
}

/** Rank of the built-in roles, for grants between built-in roles (unchanged from issue 3's keys). */
const RANK: Record<string, number> = { viewer: 1, agent: 2, member: 2, accountant: 3, admin: 4, owner: 5 };

/**
 * May `granter` hand out `role` (to a key or a member)? Nobody grants more than they hold:
 * - `owner` is granted only by an owner;
 * - between built-in roles, by rank (owner > admin > accountant > member = agent > viewer);
 * - when either side is a custom role, every pattern of the granted role must be covered by a
 *   pattern of the granter's role (`patternsCover`: `%` covers all, `invoices.%` covers
 *   `invoices.%:read`, `%:read` does not cover `invoices.%`).
 */
export function mayGrant(granter: Principal, role: string, rolePatterns: readonly string[]): boolean {
  if (role === 'owner') return granter.role === 'owner';
  if (isBuiltInRole(role) && isBuiltInRole(granter.role)) return (RANK[role] ?? 0) <= (RANK[granter.role] ?? 0);
  const own = rolePatternsOf(granter);
  return own !== undefined && patternsCover(own, rolePatterns);
}
