import type { Redis } from 'ioredis';
import { bumpVersion, currentVersion } from '../cache-version.ts';
import { Schema, type Connection, type Model } from 'mongoose';
import { ensureModel, modelOn } from '../db.ts';
import { anyPatternMatches, type Principal } from '../principal.ts';
import type { CallFacts, Risk } from '../tool.ts';

/** An autonomy policy (CONTRACT.md §3). */
export interface Policy {
  id: string;
  workspace: string;
  name: string;
  priority: number;
  match: { tools?: string[]; risk?: Risk[]; actors?: Principal['actor']['type'][]; roles?: string[] };
  /**
   * `amount_over`: the call moves more than this (the tool's declared amount). `facts`: each named
   * fact the tool declares about the call (e.g. deals' `stage_kind`) is one of the values listed (compared as text).
   */
  conditions?: { amount_over?: number; facts?: Record<string, string[]> };
  effect: PolicyEffect;
  created_at: string;
  updated_at: string;
}

export type PolicyEffect = 'allow' | 'hold' | 'ask' | 'deny';

type PolicyDoc = Omit<Policy, 'id'> & { _id: string };

const schema = new Schema<PolicyDoc>(
  {
    _id: String, workspace: String, name: String, priority: Number, match: Schema.Types.Mixed, conditions: Schema.Types.Mixed,
    effect: String, created_at: String, updated_at: String,
  },
  { versionKey: false, minimize: false },
);
schema.index({ workspace: 1 });

/** When priorities tie, the more careful effect wins. */
const CAUTION: Record<PolicyEffect, number> = { allow: 0, hold: 1, ask: 2, deny: 3 };

/** What a policy is matched against: the call, its amount and the facts its tool declares about it. */
export interface PolicyCall { tool: string; risk: Risk; principal: Principal; amount: number | null; facts?: CallFacts }

/** Does the policy select this call? */
export function policyMatches(policy: Pick<Policy, 'match' | 'conditions'>, call: PolicyCall): boolean {
  const m = policy.match ?? {};
  if (m.tools?.length && !anyPatternMatches(m.tools, { name: call.tool, risk: call.risk })) return false;
  if (m.risk?.length && !m.risk.includes(call.risk)) return false;
  if (m.actors?.length && !m.actors.includes(call.principal.actor.type)) return false;
  if (m.roles?.length && !m.roles.includes(call.principal.role)) return false;
  const over = policy.conditions?.amount_over;
  if (over !== undefined && !(call.amount !== null && call.amount > over)) return false;
  for (const [name, values] of Object.entries(policy.conditions?.facts ?? {})) {
    const have = call.facts?.[name];
    if (have === undefined || have === null || !values.includes(String(have))) return false;
  }
  return true;
}

/**
 * The tools that keep a workspace governable (CONTRACT.md §10: no policy may take away a workspace's
 * last way to list policies, decide approvals and remove a policy). No autonomy policy applies to a
 * call of one of them by a credential with the `owner` role: whatever the policies say (an `ask`,
 * `hold` or `deny` matching everything, or the owner's role, or API keys), an owner can always read
 * the policies and change or remove one, and read and decide approvals. The owner role cannot be
 * redefined or taken from the last owner (members.*), so this way cannot be removed either.
 */
export const GOVERNANCE_FLOOR: ReadonlySet<string> = new Set(['policies.list', 'policies.update', 'policies.delete', 'approvals.list', 'approvals.get', 'approvals.decide']);

/**
 * The deciding policy of a call: highest priority match; none → `allow` within the role. An owner's
 * call of a {@link GOVERNANCE_FLOOR} tool is allowed whatever the policies say.
 */
export function decide(policies: readonly Policy[], call: PolicyCall): { effect: PolicyEffect; policy: Policy | null } {
  if (call.principal.role === 'owner' && GOVERNANCE_FLOOR.has(call.tool)) return { effect: 'allow', policy: null };
  // Taking back one's own pending request only makes a held call never run: holding or asking for
  // it would keep a caller (an MCP client's `tasks/cancel`) from ever undoing what it asked.
  if (call.tool === 'approvals.withdraw') return { effect: 'allow', policy: null };
  let best: Policy | null = null;
  for (const p of policies) {
    if (!policyMatches(p, call)) continue;
    if (!best || p.priority > best.priority || (p.priority === best.priority && CAUTION[p.effect] > CAUTION[best.effect])) best = p;
  }
  return { effect: best?.effect ?? 'allow', policy: best };
}

function view(doc: PolicyDoc): Policy {
  const { _id, ...rest } = doc;
  return { id: _id, ...rest };
}

/** The workspace's autonomy policies. Read on every non-trivial call, so kept small and indexed by workspace. */
export class PolicyStore {
  readonly #model: Model<PolicyDoc>;
  readonly #redis: Redis | undefined;
  readonly #cache = new Map<string, { version: string; policies: Policy[] }>();

  /**
   * With Redis, evaluation reads a workspace's policies from a process cache checked against a
   * version number every change bumps (one Redis GET per call instead of a database query).
   */
  constructor(db: Connection, redis?: Redis) {
    this.#model = modelOn<PolicyDoc>(db, 'Policy', schema, 'policies');
    this.#redis = redis;
  }

  /** The policies that decide a call right now. */
  async forEvaluation(workspace: string): Promise<Policy[]> {
    if (!this.#redis) return this.list(workspace);
    // The version is read before the policies: a change in between only costs one more fetch.
    const version = await currentVersion(this.#redis, `cuadra:policies:${workspace}`);
    const cached = this.#cache.get(workspace);
    if (cached && cached.version === version) return cached.policies;
    const policies = await this.list(workspace);
    if (this.#cache.size > 10_000) this.#cache.clear();
    this.#cache.set(workspace, { version, policies });
    return policies;
  }

  async #changed(workspace: string): Promise<void> {
    this.#cache.delete(workspace);
    if (this.#redis) await bumpVersion(this.#redis, `cuadra:policies:${workspace}`);
  }

  async init(): Promise<void> {
    await ensureModel(this.#model);
  }

  async list(workspace: string): Promise<Policy[]> {
    const docs = await this.#model.find({ workspace }).lean();
    return docs.map(view).sort((a, b) => b.priority - a.priority || a.created_at.localeCompare(b.created_at));
  }

  async get(workspace: string, id: string): Promise<Policy | null> {
    const doc = await this.#model.findOne({ _id: id, workspace }).lean();
    return doc ? view(doc) : null;
  }

  async create(workspace: string, input: Omit<Policy, 'id' | 'workspace' | 'created_at' | 'updated_at'>, id: string, now = new Date()): Promise<Policy> {
    const doc: PolicyDoc = { _id: id, workspace, ...input, created_at: now.toISOString(), updated_at: now.toISOString() };
    await this.#model.create(doc);
    await this.#changed(workspace);
    return view(doc);
  }

  async update(workspace: string, id: string, changes: Partial<Omit<Policy, 'id' | 'workspace' | 'created_at' | 'updated_at'>>, now = new Date()): Promise<Policy | null> {
    const doc = await this.#model.findOneAndUpdate({ _id: id, workspace }, { $set: { ...changes, updated_at: now.toISOString() } }, { returnDocument: 'after' }).lean();
    await this.#changed(workspace);
    return doc ? view(doc) : null;
  }

  async delete(workspace: string, id: string): Promise<boolean> {
    const res = await this.#model.deleteOne({ _id: id, workspace });
    await this.#changed(workspace);
    return res.deletedCount === 1;
  }
}
