import { peerGraph, type PeerConfig } from './peers.ts';
import { randomBytes } from 'node:crypto';
import type { Connection } from 'mongoose';
import { newId } from './credentials.ts';
import { CuadraError, isCuadraError, OUTCOME_UNKNOWN_MESSAGE, refusalBody, statusOf } from './errors.ts';
import { decide, type Policy } from './governance/policies.ts';
import { ledgerReceiptScope } from './governance/ledger.ts';
import type { ApprovalDoc } from './governance/approvals.ts';
import type { IntentDoc } from './governance/intents.ts';
import { ACTION_LEASE_MS, intentIdOf, type IdempotencyRun } from './governance/idempotency.ts';
import { findRunStamps, runScope, stampRunsOn, withoutRunStamps, type RunStamps } from './governance/runs.ts';
import { OPERATIONS_COLLECTION, operationsOfRun } from './operations.ts';
import { systemEventsFor } from './events.ts';
import { canonicalJson } from './governance/digest.ts';
import type { Governance } from './governance/index.ts';
import { assertReach, classifyFailure } from './invoke.ts';
import type { Logger } from './logger.ts';
import type { OwnedModules } from './module.ts';
import { idempotencyScope, type Principal } from './principal.ts';
import { openInputs, openSecrets, REDACTED, sealerFromEnv, sealInputs, sealSecrets, toolInputDigest, type Sealer } from './seal.ts';
import { sha256 } from './governance/digest.ts';
import { mapSecrets, secretShape } from './secrets.ts';
import type { ToolRegistry } from './registry.ts';
import type { CallFacts, JsonSchema, Tool } from './tool.ts';

/** One call as it reaches the owning service. */
export interface OwnedCall {
  tool: string;
  input: unknown;
  principal: Principal;
  idempotencyKey?: string;
  approvalId?: string;
  /**
   * `X-Dry-Run: true`: answer what the call would do — checks, the policy decision, the tool's
   * preview (the records it would change, the journal lines) — and do nothing: no handler, no
   * approval, no idempotency record, no ledger entry.
   */
  dryRun?: boolean;
}

/** The body of a dry run's answer (status 200): what the call would do; nothing was done. */
export interface DryRunBody {
  tool: string;
  dry_run: {
    /** What the workspace's autonomy policies would decide (`allow`, `hold`, `ask`, `deny`) and which policy decided. */
    decision: { effect: 'allow' | 'hold' | 'ask' | 'deny'; policy: { id: string; name: string } | null };
    /** The tool's preview: the records that would change and, for a posting, the journal lines; null for a read (it changes nothing). */
    would: Record<string, unknown> | null;
  };
}

/** The owning service's answer: status and body exactly as the caller will get them. */
export interface OwnedAnswer {
  status: number;
  body: Record<string, unknown>;
  replayed?: boolean;
  /** `Ledger-Receipt` of the entry this answer wrote (`<seq>;<hash>;<signature>`, CONTRACT.md §9). */
  receipt?: string;
  /** `Retry-After` (seconds) of a refusal that says when to come back (a spent quota), relayed by the gateway. */
  retryAfter?: string;
}

/** A running handler's lease: after this long its intent is taken for interrupted. */
const LEASE_MS = ACTION_LEASE_MS;

/** How often an owner process renews its heartbeat, and how long one lasts. */
const HEARTBEAT_EVERY_MS = 1_000;
const HEARTBEAT_TTL_MS = 3_000;
/**
 * An intent of another process is settled only by a process whose own heartbeat has been renewed
 * without a gap for this long: had the other process been alive, it would have renewed its own
 * meanwhile (after a database outage every process's heartbeat is stale at first).
 */
const HEALTHY_BEFORE_SETTLING_MS = HEARTBEAT_TTL_MS + 1_000;

/** The governance collections a handler may write records to (policies.create, approvals.decide…); the rest is bookkeeping. */
const GOVERNANCE_RECORDS = ['policies', 'approvals'];

/** How long one settler holds an intent (one that fails half-way leaves it to the next after this). */
const SETTLING_LEASE_MS = 10_000;

/** The ledger entry id of an action's outcome: named by its intent, so it is written once whoever writes it. */
function outcomeEntryId(intentId: string): string {
  return `led_${intentId}`;
}

/** A caller's key in the idempotency store: its principal's namespace, then the key. */
function keySpace(principal: Principal, key: string): string {
  return `${idempotencyScope(principal)}:${key}`;
}

/** What a sealed secret in an idempotency record is bound to (it opens nowhere else). */
function idempotencyContext(principal: Principal, key: string): string {
  return `idem:${principal.workspace}:${keySpace(principal, key)}`;
}

/** What a sealed secret of an approval's result is bound to. */
export function approvalContext(approvalId: string): string {
  return `apr:${approvalId}`;
}

/** The answer of an action whose outcome nobody saw (CONTRACT.md §9). */
function outcomeUnknown(): OwnedAnswer {
  return { status: 502, body: refusalBody('outcome_unknown', OUTCOME_UNKNOWN_MESSAGE) as unknown as Record<string, unknown> };
}

/**
 * One attempt's bookkeeping: whether its ledger entry is written (exactly one per attempt), and
 * whether its action may have started (then its key is settled by the intent, never released).
 */
interface Attempt {
  recorded: boolean;
  acting: boolean;
  keyed?: IdempotencyRun;
  /** The key got its answer (done) or was handed back. */
  keySettled: boolean;
  /** The input's digest, once it is known to be within bounds and valid. */
  digest: string | null;
  /** The intent of its action, once written: its outcome entry is named by it. */
  intentId?: string;
}

/**
 * What names a call across its attempts (`RunContext.scope`, runs.ts): its approval (an approved
 * call runs again, after an attempt that wrote nothing, under the same approval), else its key's
 * record and nonce (a retry with the key, once recovery handed it back); none without either.
 */
function callScope(tool: string, approvalId: string | undefined, keyed: IdempotencyRun | undefined): string | undefined {
  if (approvalId) return `approval|${approvalId}`;
  return keyed ? `key|${keyed.scope}|${tool}` : undefined;
}

function refusal(err: CuadraError): OwnedAnswer {
  const answer: OwnedAnswer = { status: statusOf(err.code), body: refusalBody(err.code, err.message, err.field, err.extra) as unknown as Record<string, unknown> };
  const retryAfter = (err.extra as { headers?: Record<string, string> }).headers?.['Retry-After'];
  if (retryAfter !== undefined) answer.retryAfter = retryAfter;
  return answer;
}

/** The ledger outcome an answer stands for. */
function outcomeOf(answer: OwnedAnswer): string {
  if (answer.status === 200) return 'ok';
  if (answer.status === 202) return 'pending_approval';
  return String(answer.body.code ?? 'internal');
}

/**
 * The owning half of the one invoke pipeline, run in every service that owns tools:
 * find → reach (again) → validate (again) → idempotency → autonomy policy (allow, hold → 202,
 * ask → 403 approval_required, deny → 403 policy_denied) → run → ledger. Every attempt gets
 * exactly one ledger entry; contract refusals are answers, not exceptions, so they can be
 * replayed under an Idempotency-Key.
 */
export class ToolOwner {
  readonly subgraph: string;
  readonly #registry: ToolRegistry;
  readonly #governance: Governance;
  readonly #db: Connection;
  readonly #log: Logger;
  /** Seals secret outputs at rest (idempotency records, approvals); null: secrets are not kept at all. */
  readonly #sealer: Sealer | null = sealerFromEnv();
  readonly #executor = `${process.pid}-${randomBytes(4).toString('hex')}`;
  /** Intents of handlers running in this process now (any other intent of this executor is left over). */
  readonly #running = new Set<string>();
  #lastHeartbeat = 0;
  /** Since when this process's heartbeat has been renewed without a gap (0: it is not). */
  #healthySince = 0;
  #timer: NodeJS.Timeout | undefined;
  #sweeping = false;
  #lastMaintenance = 0;
  readonly #maintenance: boolean;
  readonly #maintenanceHooks: OwnedModules['maintenanceHooks'];

  /** `maintenance`: this service also expires approvals and idempotency records (one service is enough; the agents subgraph does it). */
  readonly #services: unknown;
  readonly #peers: PeerConfig | undefined;
  readonly #subgraph: string;

  constructor(deps: { subgraph: string; registry: ToolRegistry; governance: Governance; db: Connection; log: Logger; maintenance?: boolean; maintenanceHooks?: OwnedModules['maintenanceHooks']; services?: unknown; peers?: PeerConfig }) {
    this.#peers = deps.peers;
    this.#subgraph = deps.subgraph;
    this.#maintenance = deps.maintenance ?? false;
    this.#maintenanceHooks = deps.maintenanceHooks ?? [];
    this.#services = deps.services;
    this.subgraph = deps.subgraph;
    this.#registry = deps.registry;
    this.#governance = deps.governance;
    this.#db = deps.db;
    this.#log = deps.log;
    this.#governance.idempotency.probeIntentsWith(this.#probe());
    // Whatever a handler writes in this service's database carries its run (runs.ts).
    if (this.#db !== this.#governance.db) stampRunsOn(this.#db);
    stampRunsOn(this.#governance.db, { only: GOVERNANCE_RECORDS });
  }

  /** Runs one call through the owning half of the pipeline. Throws only for `internal`/`unavailable`. */
  async call(call: OwnedCall): Promise<OwnedAnswer> {
    return this.#answer(call, true);
  }

  /**
   * Runs a call whose reach and input the gateway's pipeline has checked already, against the same
   * declarations: in this same process (the tools the gateway owns), or in the gateway for a call
   * it vouched for over the hop (`Cuadra-Checked`, shared/src/checked-call.ts). Checking them again
   * here could refuse nothing, so they run once. Any other call goes through {@link call}, which
   * checks (CONTRACT.md §3).
   */
  async callPrechecked(call: OwnedCall): Promise<OwnedAnswer> {
    return this.#answer(call, false);
  }

  async #answer(call: OwnedCall, check: boolean): Promise<OwnedAnswer> {
    // The answer carries the receipt of the ledger entry the call wrote.
    const scope: { receipt?: string } = {};
    const answer = await ledgerReceiptScope.run(scope, () => this.#attempt(call, check));
    return scope.receipt ? { ...answer, receipt: scope.receipt } : answer;
  }

  /** One attempt, with its bookkeeping: exactly one ledger entry; its key handed back only if nothing was done. */
  async #attempt(call: OwnedCall, check: boolean): Promise<OwnedAnswer> {
    const started = Date.now();
    const tool = this.#registry.get(call.tool);
    const attempt: Attempt = { recorded: false, acting: false, keySettled: false, digest: null };
    const ledger = async (answer: OwnedAnswer, extra: { approval_id?: string; replayed?: boolean } = {}) => {
      await this.#governance.ledger.append({
        // Digested only once the input passed its bounds and schema: a hostile input is never walked.
        principal: call.principal, tool: call.tool, risk: tool?.risk ?? null, input_digest: attempt.digest,
        outcome: outcomeOf(answer), approval_id: extra.approval_id ?? (answer.body.approval_id as string | undefined),
        idempotency_key: call.idempotencyKey, replayed: extra.replayed, duration_ms: Date.now() - started,
      });
      attempt.recorded = true;
    };
    try {
      return await this.#call(call, tool, attempt, ledger, started, check);
    } catch (err) {
      const error = classifyFailure(err);
      // Every attempt has its entry, server failures included (best effort: the store may be what failed).
      if (!attempt.recorded) {
        await this.#governance.ledger.append({
          principal: call.principal, tool: call.tool, risk: tool?.risk ?? null, input_digest: attempt.digest, outcome: attempt.acting ? 'outcome_unknown' : error.code,
          idempotency_key: call.idempotencyKey, duration_ms: Date.now() - started, ...(attempt.acting && attempt.intentId ? { id: outcomeEntryId(attempt.intentId) } : {}),
        }).catch(() => undefined);
      }
      // A key is handed back only when its action provably never started; otherwise its intent settles it.
      if (attempt.keyed && !attempt.keySettled && !attempt.acting) await attempt.keyed.release().catch(() => undefined);
      if (attempt.acting) throw new CuadraError('outcome_unknown', OUTCOME_UNKNOWN_MESSAGE, { cause: err });
      throw error;
    }
  }

  async #call(call: OwnedCall, tool: Tool<any, any> | undefined, attempt: Attempt, ledger: (answer: OwnedAnswer, extra?: { approval_id?: string; replayed?: boolean }) => Promise<void>, started: number, check: boolean): Promise<OwnedAnswer> {
    if (!tool) {
      const answer = refusal(new CuadraError('unknown_tool', `No tool is named "${call.tool}".`));
      await ledger(answer);
      return answer;
    }
    if (check) {
      try {
        assertReach(call.principal, tool);
        this.#registry.validate(tool.name, call.input);
      } catch (err) {
        if (!isCuadraError(err)) throw err;
        const answer = refusal(err);
        await ledger(answer);
        return answer;
      }
    }
    const input = call.input as Record<string, unknown>;
    if (call.dryRun) return this.#dryRun(tool, input, call.principal, attempt);
    // Secrets are digested by HMAC, never plainly (a PIN's SHA-256 would be guessed from the ledger).
    const digest = toolInputDigest(input, secretShape(tool.input), call.principal.workspace);
    attempt.digest = digest;
    // The policies that decide this call are read while the key is taken (one round trip less to
    // wait for); a failure to read them surfaces where they are used, as before.
    const policies = call.approvalId ? undefined : this.#governance.policies.forEvaluation(call.principal.workspace);
    policies?.catch(() => undefined);

    if (call.idempotencyKey) {
      let keyed;
      try {
        // Keys are scoped to the principal (CONTRACT.md §9): another caller's same string is another request.
        keyed = await this.#governance.idempotency.begin(call.principal.workspace, keySpace(call.principal, call.idempotencyKey), tool.name, digest);
      } catch (err) {
        if (!isCuadraError(err)) throw err;
        const answer = refusal(err);
        await ledger(answer);
        return answer;
      }
      if (keyed.kind === 'replay') {
        // A replay goes only to the principal that made the first call: its secrets are opened for it.
        const answer = { ...openSecrets(keyed.answer, this.#sealer, idempotencyContext(call.principal, call.idempotencyKey), true), replayed: true };
        await ledger(answer, { replayed: true });
        return answer;
      }
      attempt.keyed = keyed;
    }
    const answer = await this.#decideAndRun(tool, input, digest, call, started, attempt, policies);
    if (attempt.keyed && !attempt.keySettled) {
      // Server failures before any action are not kept: nothing was done, so a retry may run.
      if (answer.status >= 500 && answer.body.code !== 'outcome_unknown') await attempt.keyed.release();
      else await attempt.keyed.complete(sealSecrets(answer, secretShape(tool.output), this.#sealer, idempotencyContext(call.principal, call.idempotencyKey!)));
      attempt.keySettled = true;
    }
    return answer;
  }

  async #decideAndRun(tool: Tool<any, any>, input: Record<string, unknown>, digest: string, call: OwnedCall, started: number, attempt: Attempt, loading?: Promise<Policy[]>): Promise<OwnedAnswer> {
    const { principal } = call;
    const record = async (answer: OwnedAnswer, approvalId?: string) => {
      await this.#governance.ledger.append({
        principal, tool: tool.name, risk: tool.risk, input_digest: digest, outcome: outcomeOf(answer), approval_id: approvalId,
        idempotency_key: call.idempotencyKey, duration_ms: Date.now() - started,
      });
      attempt.recorded = true;
    };

    if (call.approvalId) {
      const approval = await this.#governance.approvals.useAsk(principal.workspace, call.approvalId, principal.credential_id, tool.name, digest);
      if (!approval) {
        const answer = refusal(new CuadraError('policy_denied', 'That approval cannot be used: it is unknown, not approved, already used, or for another call or caller.'));
        await record(answer, call.approvalId);
        return answer;
      }
      const answer = await this.#run(tool, input, digest, principal, { approvalId: approval._id, idempotencyKey: call.idempotencyKey, started, attempt });
      // An outcome nobody saw: its intent settles the approval (run again if it provably did nothing).
      if (answer.body.code !== 'outcome_unknown') await this.#governance.approvals.finish(approval._id, answer.status === 200 ? 'executed' : 'failed', sealSecrets(answer, secretShape(tool.output), this.#sealer, approvalContext(approval._id)), answer.status === 200 ? null : String(answer.body.error ?? 'refused'));
      return answer;
    }

    const { effect, policy } = await this.#decision(tool, input, principal, loading);
    if (effect === 'deny') {
      const answer = refusal(new CuadraError('policy_denied', `The workspace policy "${policy!.name}" does not allow ${tool.name}.`));
      await record(answer);
      return answer;
    }
    if (effect === 'ask' || effect === 'hold') {
      let preview: Record<string, unknown> | undefined;
      if (tool.preview) {
        try {
          preview = await tool.preview(input, this.#context(principal, new Date()));
        } catch (err) {
          const error = classifyFailure(err);
          // A call that would be refused is refused now, not held for a person to approve in vain.
          if (['invalid_input', 'not_found', 'conflict'].includes(error.code)) {
            const answer = refusal(error);
            await record(answer);
            return answer;
          }
          preview = { error: `The preview could not be made: ${error.code === 'internal' ? 'an internal error' : error.message}` };
        }
      }
      const approvalId = newId('apr');
      const approval = await this.#governance.approvals.create({
        id: approvalId, workspace: principal.workspace, subgraph: this.subgraph, mode: effect, tool: tool.name,
        input: sealInputs(input, secretShape(tool.input), this.#sealer, approvalContext(approvalId)), inputDigest: digest,
        idempotencyKey: call.idempotencyKey, principal, ...(policy ? { policy: { id: policy.id, name: policy.name } } : {}), ...(preview ? { preview } : {}),
      });
      const answer: OwnedAnswer = effect === 'hold'
        ? { status: 202, body: { tool: tool.name, status: 'pending_approval', approval_id: approval._id } }
        : refusal(new CuadraError('approval_required', `The workspace policy "${policy!.name}" asks a person to approve ${tool.name} first; repeat the call with X-Approval-Id: ${approval._id} once it is approved.`, { extra: { approval_id: approval._id } }));
      await record(answer, approval._id);
      return answer;
    }
    return this.#run(tool, input, digest, principal, { idempotencyKey: call.idempotencyKey, started, attempt });
  }

  /** What the workspace's autonomy policies decide for this call (the tool's own default when none matches). */
  async #decision(tool: Tool<any, any>, input: Record<string, unknown>, principal: Principal, loading?: Promise<Policy[]>): Promise<{ effect: 'allow' | 'hold' | 'ask' | 'deny'; policy: { id: string; name: string } | null }> {
    const policies = await (loading ?? this.#governance.policies.forEvaluation(principal.workspace));
    // Facts kept on the record the call acts on (a deal's amount…) are looked up for the policies; none if that fails.
    const facts: CallFacts = tool.facts && policies.length ? await tool.facts(input, { db: this.#db, workspace: principal.workspace }).catch(() => ({})) : {};
    const amount = typeof facts.amount === 'number' ? facts.amount : tool.amount ? tool.amount(input) : null;
    const decided = decide(policies, { tool: tool.name, risk: tool.risk, principal, amount, facts });
    // No workspace policy matched: the tool's own default applies (a campaign send is held), else allow.
    return !decided.policy && tool.defaultEffect
      ? { effect: tool.defaultEffect, policy: { id: 'default', name: `${tool.name} waits for a person by default` } }
      : { effect: decided.effect, policy: decided.policy ? { id: decided.policy.id, name: decided.policy.name } : null };
  }

  /**
   * A dry run (`X-Dry-Run: true`): the call checked like any other (reach, schema — already done by
   * the caller of this), the policy decision it would get, and what it would do — the tool's
   * declared `preview`, which only reads. Nothing is written: no handler runs, no approval, no
   * idempotency record, no ledger entry (so the answer carries no receipt). A write tool that
   * declares no preview refuses `dry_run_unsupported` rather than run; a read changes nothing, so
   * its dry run answers the decision only. A refusal its preview throws is the dry run's answer.
   */
  async #dryRun(tool: Tool<any, any>, input: Record<string, unknown>, principal: Principal, attempt: Attempt): Promise<OwnedAnswer> {
    // Nothing of this attempt goes on the ledger, refusals included (the attempt's failure path writes none either).
    attempt.recorded = true;
    if (tool.risk !== 'read' && !tool.preview) {
      return refusal(new CuadraError('dry_run_unsupported', `${tool.name} cannot say beforehand what it would do, so it does not take X-Dry-Run; nothing was done.`));
    }
    try {
      const decision = await this.#decision(tool, input, principal);
      const would = tool.risk === 'read' || !tool.preview ? null : await tool.preview(input, this.#context(principal, new Date()));
      const body: DryRunBody = { tool: tool.name, dry_run: { decision, would } };
      return { status: 200, body: body as unknown as Record<string, unknown> };
    } catch (err) {
      if (isCuadraError(err) && statusOf(err.code) < 500) return refusal(err);
      throw err;
    }
  }

  /**
   * Runs the handler between an intent and its ledger entry. The intent is written before the
   * handler starts, so a key whose intent never existed provably never acted. Once the handler
   * may have acted, a failure is `outcome_unknown` (never "nothing was done"), and the key gets its
   * answer before the intent goes, so a retry replays what happened.
   */
  async #run(tool: Tool<any, any>, input: Record<string, unknown>, digest: string, principal: Principal, opts: { approvalId?: string; idempotencyKey?: string; started: number; attempt?: Attempt }): Promise<OwnedAnswer> {
    const attempt = opts.attempt ?? { recorded: false, acting: false, keySettled: false, digest };
    // A read changes nothing: there is no action to account for if the process dies mid-way.
    const intentId = tool.risk === 'read' ? null : attempt.keyed ? intentIdOf(attempt.keyed.run) : newId('int');
    if (intentId) {
      this.#running.add(intentId);
      try {
        await this.#governance.intents.create({
          _id: intentId, workspace: principal.workspace, subgraph: this.subgraph, tool: tool.name, risk: tool.risk, input_digest: digest, principal,
          approval_id: opts.approvalId ?? null, idempotency_key: opts.idempotencyKey ?? null, started_at: new Date(), executor: this.#executor,
        });
      } catch (err) {
        this.#running.delete(intentId);
        throw err;
      }
    }
    attempt.acting = intentId !== null;
    if (intentId) attempt.intentId = intentId;
    try {
      return await this.#runActing(tool, input, digest, principal, opts, attempt, intentId);
    } finally {
      if (intentId) this.#running.delete(intentId);
    }
  }

  /** {@link #run} once its intent is stored: the handler (its writes stamped with the run), its entry, its key, the intent removed. */
  async #runActing(tool: Tool<any, any>, input: Record<string, unknown>, digest: string, principal: Principal, opts: { approvalId?: string; idempotencyKey?: string; started: number }, attempt: Attempt, intentId: string | null): Promise<OwnedAnswer> {
    let answer: OwnedAnswer;
    let failure: CuadraError | undefined;
    try {
      const context = this.#context(principal, new Date());
      const output = intentId
        ? await runScope.run({ run: intentId, scope: callScope(tool.name, opts.approvalId, attempt.keyed), markDeletes: async () => { await this.#governance.intents.updateOne({ _id: intentId }, { $set: { deletes: true } }); } }, () => tool.handler(input, context))
        : await tool.handler(input, context);
      answer = { status: 200, body: { tool: tool.name, output: withoutRunStamps(output) } };
    } catch (err) {
      const error = classifyFailure(err);
      if (error.code === 'internal') this.#log.error({ err: error.cause ?? err, tool: tool.name }, 'tool failed');
      if (error.code === 'internal' || error.code === 'unavailable') {
        // A read did nothing; an action may have taken effect before it failed, unless the handler
        // says it failed before writing anything (a lookup in another service, made first).
        if (intentId && !(error.code === 'unavailable' && error.beforeAnyEffect)) {
          // Nobody saw how it ended (its store failed mid-write, most often). Its intent stays and is
          // settled from the owner's records as soon as the store answers: its entry, its key (run
          // again if it provably wrote nothing), its approval — never an outcome_unknown kept for good.
          await this.#governance.intents.updateOne({ _id: intentId }, { $set: { abandoned: true } }).catch(() => undefined);
          attempt.recorded = true;
          attempt.keySettled = true;
          return outcomeUnknown();
        }
        answer = refusal(error);
        failure = error;
      } else answer = refusal(error);
    }
    await this.#governance.ledger.append({
      principal, tool: tool.name, risk: tool.risk, input_digest: digest, outcome: outcomeOf(answer), approval_id: opts.approvalId,
      idempotency_key: opts.idempotencyKey, duration_ms: Date.now() - opts.started, ...(intentId ? { id: outcomeEntryId(intentId) } : {}),
    });
    attempt.recorded = true;
    if (attempt.keyed && !attempt.keySettled && !failure) {
      // A quota refusal (429 rate_limited: nothing done, "wait and retry") is not kept: kept, the retry would replay it for good.
      if (answer.body.code === 'rate_limited') await attempt.keyed.release();
      else await attempt.keyed.complete(sealSecrets(answer, secretShape(tool.output), this.#sealer, idempotencyContext(principal, opts.idempotencyKey!)));
      attempt.keySettled = true;
    }
    if (intentId) await this.#governance.intents.deleteOne({ _id: intentId });
    attempt.acting = false;
    if (failure) throw failure;
    return answer;
  }

  /**
   * Seals what approvals stored in plain text before their tool declared a secret input (or before
   * secrets were found at any depth): each plain secret sealed for its approval, or withheld with no
   * seal key (CONTRACT.md §10). By default this service's own tools; the gateway, which every caller
   * reaches approvals through, gives every tool of the catalog and runs it before it listens. A marker
   * per set of declarations makes later starts one read, and a new declaration runs it again.
   * Idempotent: a sealed box is not sealed twice.
   */
  async sealStoredInputs(declared?: readonly { name: string; subgraph: string; input: JsonSchema }[]): Promise<number> {
    const all = declared ?? [...this.#registry.tools.values()].map((t) => ({ name: t.name, subgraph: this.subgraph, input: t.input }));
    const tools = all.filter((t) => secretShape(t.input));
    if (tools.length === 0) return 0;
    const { model } = this.#governance.approvals;
    const migrations = model.db.collection<{ _id: string; at: Date }>('migrations');
    const marker = `approval-inputs-sealed:${declared ? 'catalog' : this.subgraph}:${sha256(tools.map((t) => `${t.subgraph}/${t.name}=${JSON.stringify(t.input)}`).join('\n')).slice(0, 16)}`;
    if (await migrations.findOne({ _id: marker })) return 0;
    let sealed = 0;
    for (const tool of tools) {
      const shape = secretShape(tool.input);
      for await (const doc of model.find({ subgraph: tool.subgraph, tool: tool.name }, { _id: 1, input: 1 }).lean().cursor()) {
        let plain = false;
        const input = mapSecrets(doc.input, shape, (secret) => {
          if (secret === REDACTED) return secret;
          plain = true;
          return this.#sealer ? { $sealed: this.#sealer.seal(secret, approvalContext(doc._id)) } : REDACTED;
        });
        if (!plain) continue;
        await model.updateOne({ _id: doc._id }, { $set: { input } });
        sealed++;
      }
    }
    await migrations.updateOne({ _id: marker }, { $set: { at: new Date() } }, { upsert: true });
    if (sealed > 0) this.#log.info({ sealed, subgraph: this.subgraph }, 'sealed secret inputs stored in plain text in approvals');
    return sealed;
  }

  /** What a handler (or a preview) of this service receives for a caller. */
  #context(principal: Principal, now: Date) {
    return { principal, workspace: principal.workspace, db: this.#db, log: this.#log, now, governance: this.#governance, services: this.#services, graph: peerGraph(this.#subgraph, this.#peers, principal.workspace) };
  }

  /** Runs one approved held call, at most once (the claim is a conditional update). */
  async runApproved(doc: ApprovalDoc): Promise<void> {
    const claimed = await this.#governance.approvals.claim(doc._id, this.#executor, LEASE_MS);
    if (!claimed) return;
    const started = Date.now();
    const tool = this.#registry.get(claimed.tool);
    let input = claimed.input;
    try {
      if (!tool) throw new CuadraError('unknown_tool', `The tool ${claimed.tool} no longer exists.`);
      // As the original caller, checked again: a role or key changed since the request counts.
      assertReach(claimed.principal, tool);
      const opened = openInputs(claimed.input, secretShape(tool.input), this.#sealer, approvalContext(claimed._id));
      if (!opened) throw new CuadraError('conflict', `A secret of this ${tool.name} call could not be opened (no seal key, or another one); call the tool again.`);
      input = opened;
      this.#registry.validate(tool.name, input);
    } catch (err) {
      const error = isCuadraError(err) ? err : classifyFailure(err);
      const answer = refusal(error);
      await this.#governance.ledger.append({ principal: claimed.principal, tool: claimed.tool, risk: tool?.risk ?? null, input_digest: claimed.input_digest, outcome: outcomeOf(answer), approval_id: claimed._id, duration_ms: Date.now() - started });
      await this.#governance.approvals.finish(claimed._id, 'failed', answer, error.message);
      return;
    }
    try {
      const answer = await this.#run(tool, input, claimed.input_digest, claimed.principal, { approvalId: claimed._id, idempotencyKey: claimed.idempotency_key ?? undefined, started });
      if (answer.body.code === 'outcome_unknown') return; // its intent settles the approval
      await this.#governance.approvals.finish(claimed._id, answer.status === 200 ? 'executed' : 'failed', sealSecrets(answer, secretShape(tool.output), this.#sealer, approvalContext(claimed._id)), answer.status === 200 ? null : String(answer.body.error ?? 'refused'));
    } catch (err) {
      const error = classifyFailure(err);
      await this.#governance.approvals.finish(claimed._id, 'failed', refusal(error), error.message).catch(() => undefined);
    }
  }

  /**
   * Settles what a dead or failed attempt left, within seconds: an intent whose handler ended with
   * no outcome (`abandoned`), one of this process that no handler here runs any more, one whose
   * process's heartbeat has stopped (checked only once this process's own heartbeat has been steady
   * for {@link HEALTHY_BEFORE_SETTLING_MS}), and any past its lease. Approvals claimed but never
   * started go back to approved.
   */
  async recover(now = new Date()): Promise<void> {
    const { intents, approvals, ledger, executors } = this.#governance;
    const candidates = await intents.find({ subgraph: this.subgraph, started_at: { $lt: new Date(now.getTime() - 500) } }).limit(100).lean();
    const others = [...new Set(candidates.map((i) => i.executor).filter((e): e is string => !!e && e !== this.#executor))];
    const steady = this.#healthySince > 0 && now.getTime() - this.#healthySince >= HEALTHY_BEFORE_SETTLING_MS;
    const alive = new Set(others.length > 0 && steady ? (await executors.find({ _id: { $in: others }, alive_until: { $gt: now } }, { _id: 1 }).lean()).map((e) => e._id) : others);
    for (const intent of candidates) {
      const leftOver = intent.abandoned === true
        || (intent.executor === this.#executor && !this.#running.has(intent._id))
        || (!!intent.executor && intent.executor !== this.#executor && !alive.has(intent.executor))
        || intent.started_at.getTime() < now.getTime() - LEASE_MS;
      if (leftOver) await this.#settleIntent(intent, now);
    }
    for (const doc of await approvals.abandonedFor(this.subgraph, now)) {
      const started = await intents.exists({ approval_id: doc._id });
      if (started) continue; // its intent settles it above once its lease passes
      const ran = await ledger.entries.exists({ workspace: doc.workspace, approval_id: doc._id, outcome: { $ne: 'pending_approval' } });
      if (ran) {
        await approvals.finish(doc._id, 'executed', null, 'The call ran; its output was not kept because the service stopped right after.');
      } else {
        // Claimed, never started: safe to run again.
        await approvals.model.updateOne({ _id: doc._id, status: 'executing', lease_until: doc.lease_until }, { $set: { status: 'approved', executor: null, lease_until: null } });
      }
    }
  }

  /**
   * Settles one intent whose attempt ended without an outcome, from this service's records (the
   * run stamps, runs.ts): its ledger entry (`interrupted`, named by the intent: written once); then
   * — when no record carries its run and it deleted nothing, so it provably did nothing — its
   * Idempotency-Key is handed back (the retry runs it) and its approval goes back to approved (run
   * again); otherwise its key answers `outcome_unknown` and its approval ends `failed`. The intent
   * is claimed first (a settling lease) and removed last, so a settler that dies half-way leaves it
   * for the next. False if another settles it.
   */
  async #settleIntent(intent: IntentDoc, now = new Date()): Promise<boolean> {
    const { intents, approvals, ledger, idempotency } = this.#governance;
    const claimed = await intents.findOneAndUpdate(
      { _id: intent._id, $or: [{ settling_until: { $exists: false } }, { settling_until: null }, { settling_until: { $lt: now } }] },
      { $set: { settling_until: new Date(now.getTime() + SETTLING_LEASE_MS) } },
      { new: true },
    ).lean();
    if (!claimed) return false;
    const stamps = [...(this.#db !== this.#governance.db ? await findRunStamps(this.#db, intent._id) : []), ...(await findRunStamps(this.#governance.db, intent._id))];
    // A run that started a durable operation (operations.ts) is finished here, and answered from
    // the operation's record: the operation is its whole effect, its own bookkeeping deletes included.
    const operations = this.#db !== this.#governance.db ? await operationsOfRun(this.#db, intent._id, now) : [];
    // A tool of risk `external` acts outside (mail, DIAN, the bank): its records cannot prove it did nothing.
    const wroteNothing = intent.risk !== 'external' && !claimed.deletes && stamps.length === 0 && operations.length === 0;
    const recovered = operations.length === 1 && intent.risk !== 'external'
      ? await this.#answerFromRecord(intent, [{ collection: OPERATIONS_COLLECTION, ids: [operations[0].record] }])
      : wroteNothing || claimed.deletes ? null : await this.#answerFromRecord(intent, stamps);
    await ledger.append({
      id: outcomeEntryId(intent._id), principal: intent.principal, tool: intent.tool, risk: intent.risk, input_digest: intent.input_digest, outcome: 'interrupted',
      approval_id: intent.approval_id ?? undefined, idempotency_key: intent.idempotency_key ?? undefined, duration_ms: now.getTime() - intent.started_at.getTime(),
    });
    const tool = this.#registry.get(intent.tool);
    if (intent.approval_id) {
      if (wroteNothing) await approvals.model.updateOne({ _id: intent.approval_id, status: 'executing' }, { $set: { status: 'approved', executor: null, lease_until: null } });
      else if (recovered) await approvals.finish(intent.approval_id, 'executed', sealSecrets(recovered, secretShape(tool?.output), this.#sealer, approvalContext(intent.approval_id)), null);
      else await approvals.finish(intent.approval_id, 'failed', null, 'The service stopped while running this call, after it had changed some records; check them before asking again.');
    }
    if (intent.idempotency_key && intent._id.startsWith('int_')) {
      const run = intent._id.slice(4);
      if (wroteNothing) await idempotency.releaseRun(run);
      else if (recovered) await idempotency.settleInterrupted(run, sealSecrets(recovered, secretShape(tool?.output), this.#sealer, idempotencyContext(intent.principal, intent.idempotency_key)));
      else await idempotency.settleInterrupted(run, outcomeUnknown());
    }
    await intents.deleteOne({ _id: intent._id });
    return true;
  }

  /**
   * The answer of an interrupted action that wrote exactly one record — one document's write is
   * atomic, so that record is its whole effect — read back through its module's `<module>.get`,
   * when that tool answers every part of the action's output with the same schema (a create or an
   * update answering `{party: …}` and `parties.get` answering `{party: …, …}`). The record as it is
   * now, as the action's principal reads it; null when any of that does not hold (then the outcome
   * stays `outcome_unknown`: something was written, and what the answer was cannot be proven).
   */
  async #answerFromRecord(intent: IntentDoc, stamps: RunStamps[]): Promise<OwnedAnswer | null> {
    if (stamps.length !== 1 || stamps[0].ids.length !== 1) return null;
    const tool = this.#registry.get(intent.tool);
    const reader = tool ? this.#registry.get(`${tool.module}.get`) : undefined;
    const want = (tool?.output as { properties?: Record<string, JsonSchema>; required?: string[] } | undefined);
    const have = (reader?.output as { properties?: Record<string, JsonSchema> } | undefined);
    if (!tool || !reader || reader.risk !== 'read' || !want?.properties || !have?.properties) return null;
    const keys = Object.keys(want.properties);
    if (keys.length === 0 || keys.some((k) => !have.properties![k] || canonicalJson(have.properties![k]) !== canonicalJson(want.properties![k]))) return null;
    try {
      const principal = intent.principal;
      const output = await reader.handler({ id: stamps[0].ids[0] }, this.#context(principal, new Date())) as Record<string, unknown>;
      if ((want.required ?? []).some((k) => !(k in output))) return null;
      return { status: 200, body: { tool: tool.name, output: withoutRunStamps(Object.fromEntries(keys.filter((k) => k in output).map((k) => [k, output[k]]))) } };
    } catch (err) {
      if (isCuadraError(err) && err.code === 'not_found') return null; // not that tool's record (another collection's)
      throw err; // unreadable now: settled by a later pass
    }
  }

  /** Lets the idempotency store settle, on a retry, an attempt whose process died. */
  #probe() {
    const { intents } = this.#governance;
    return {
      exists: async (intentId: string) => (await intents.exists({ _id: intentId })) !== null,
      settle: async (intentId: string) => {
        const intent = await intents.findById(intentId).lean();
        return intent ? this.#settleIntent(intent) : false;
      },
    };
  }

  /** Renews this process's heartbeat (at most once a second); notes since when it has been steady. */
  async #heartbeat(): Promise<void> {
    const now = Date.now();
    if (now - this.#lastHeartbeat < HEARTBEAT_EVERY_MS) return;
    try {
      await this.#governance.executors.updateOne({ _id: this.#executor }, { $set: { subgraph: this.subgraph, alive_until: new Date(now + HEARTBEAT_TTL_MS) } }, { upsert: true });
      if (this.#healthySince === 0 || now - this.#lastHeartbeat > HEARTBEAT_TTL_MS) this.#healthySince = now;
      this.#lastHeartbeat = now;
    } catch (err) {
      this.#healthySince = 0;
      throw err;
    }
  }

  /** One pass of the background work: heartbeat, recovery, then approved held calls. */
  async sweep(): Promise<void> {
    if (this.#sweeping) return;
    this.#sweeping = true;
    try {
      await this.#heartbeat();
      // Recovery before the modules' repairs: a dead call's operation markers are settled with the call
      // (operationsOfRun). A call recovery leaves alone (its process still looks alive) can have its
      // marker met first by a module's stale-operation pass; either order keeps it watched for a record
      // landing late (operations.ts, finishOperation).
      await this.recover();
      await this.repairModules();
      if (this.#maintenance && Date.now() - this.#lastMaintenance > 60_000) {
        this.#lastMaintenance = Date.now();
        await this.#governance.approvals.expire();
        await this.#governance.idempotency.sweep();
        // Day counters behind by more than a block (a crash, or a chain written before they existed).
        await this.#governance.ledger.countAllActivity();
      }
      for (const doc of await this.#governance.approvals.approvedFor(this.subgraph)) await this.runApproved(doc);
    } catch (err) {
      this.#log.warn({ err }, 'approval sweep failed; will retry');
    } finally {
      this.#sweeping = false;
    }
  }

  /**
   * Runs each module's maintenance hook once: what a dead process left is finished here, in the
   * background, so no read ever writes. A failing hook is logged and the others still run.
   */
  async repairModules(now = new Date()): Promise<number> {
    let repaired = 0;
    for (const hook of this.#maintenanceHooks) {
      try {
        repaired += await hook.run({ db: this.#db, now, log: this.#log, events: systemEventsFor(this.#governance.ledger, this.subgraph, hook.module), mailQuota: this.#governance.mailQuota });
      } catch (err) {
        this.#log.warn({ err, module: hook.module }, 'module maintenance failed; will retry');
      }
    }
    return repaired;
  }

  /** Starts the background sweep (approved calls run within about `intervalMs`). */
  start(intervalMs = 500): void {
    this.#timer ??= setInterval(() => void this.sweep(), intervalMs);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    while (this.#sweeping) await new Promise((r) => setTimeout(r, 20));
    // Stopped in order: its heartbeat goes, so another process settles at once whatever it left.
    await this.#governance.executors.deleteOne({ _id: this.#executor }).catch(() => undefined);
  }
}
