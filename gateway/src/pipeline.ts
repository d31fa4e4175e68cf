import { assertReach, countedHeaders, CuadraError, FairShare, fairShareFromEnv, secretShape, statusOf, toCuadraError, toolInputDigest, type Governance, type Principal, type RateCount, type RateLimiter, type CatalogEntry, type OwnedAnswer, type Risk, type ToolAnswer, type ToolOwner } from '@cuadra/shared';
import type { AssertionSigner } from './assertions.ts';
import type { Catalog } from './catalog.ts';
import { RelayedAnswer, SentJson, type ForwardOptions, type SubgraphForwarder } from './forward.ts';
import type { IdentityStore } from './identity/store.ts';
import { errorFromBody } from './refusals.ts';
import { requestedVersion, VERSION_HEADER } from './versions/dates.ts';
import { deprecationHeaders } from './versions/deprecation.ts';

/**
 * How a surface hands over the request body: read lazily, so size is checked before parsing. It
 * resolves to the input, or to a {@link SentJson} — the input with the exact JSON text it was parsed
 * from, which then goes to the owning subgraph as that text (not serialised again).
 */
export type BodySource = (limitBytes: number) => Promise<unknown>;

/** One invoke, as any surface (REST, MCP, canvas) describes it. */
export interface InvokeRequest {
  authorization: string | undefined;
  tool: string;
  body: BodySource;
  tenant?: string;
  /** `Idempotency-Key` header (1–255 visible ASCII characters). */
  idempotencyKey?: string;
  /** `X-Approval-Id` header: runs an `ask` call its approval allowed. */
  approvalId?: string;
  /**
   * The caller, when the surface's gate already authenticated this HTTP request (`/graphql`,
   * `/mcp`): used as is, so a request looks its credential up once. A revoked credential is
   * still refused by the next request's gate.
   */
  principal?: Principal;
  /** This request's rate-limit count, when the surface's gate already took it (`/mcp`): its headers, or its refusal. */
  counted?: RateCount;
  /** The `Cuadra-Version` the caller asked for (the header as sent); absent: the workspace's pinned version. */
  version?: string;
  /** `X-Dry-Run: true`: answer what the call would do and do nothing (ToolOwner's dry run). */
  dryRun?: boolean;
  /**
   * Aborts when the caller hangs up (REST: its response closed before the answer). A call still
   * waiting for its workspace's fair-share slot then gives up its turn and never runs: the
   * pipeline rejects with the signal's `AbortError` (nothing done, nobody to answer or record for).
   */
  signal?: AbortSignal;
}

export type { RateCount };

/** The credential of an `Authorization: Bearer …` header; `unauthenticated` without one. */
function bearerToken(authorization: string | undefined): string {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  if (!match) throw new CuadraError('unauthenticated', 'Send a credential: Authorization: Bearer <API key or access token>.');
  return match[1];
}

/** The answer of the pipeline: headers always, and either the tool's answer or a thrown refusal. */
export interface InvokeResult {
  /** 200 (the tool ran: body `{tool, output}`) or 202 (held: body `{tool, status: "pending_approval", approval_id}`). */
  status: 200 | 202;
  body: ToolAnswer | { tool: string; status: 'pending_approval'; approval_id: string };
  /** RateLimit headers, and `Idempotent-Replayed: true` on a replay. */
  headers: Record<string, string>;
  /** `body` as the owning subgraph serialised it (UTF-8 JSON), when it came over the hop: sent as is. */
  json?: Buffer;
}

/** A refusal carrying the headers gathered so far (rate-limit headers belong on every answer). */
export class PipelineRefusal extends Error {
  readonly error: CuadraError;
  readonly headers: Record<string, string>;
  constructor(error: CuadraError, headers: Record<string, string>) {
    super(error.message);
    this.error = error;
    this.headers = headers;
  }
}

/** One call's state through the pipeline's steps: what its refusal records and what its answer carries. */
class Call {
  readonly principal: Principal;
  readonly req: InvokeRequest;
  readonly started = Date.now();
  /** RateLimit, Cuadra-Version and deprecation headers: on every answer, refusals included. */
  headers: Record<string, string> = {};
  risk: Risk | null = null;
  /** Set once the input is valid; digested only if a refusal decided here needs a ledger entry. */
  validInput: { value: unknown; schema: Record<string, unknown> } | null = null;
  constructor(principal: Principal, req: InvokeRequest) {
    this.principal = principal;
    this.req = req;
  }
}

/**
 * The gateway's half of the one invoke pipeline (CONTRACT.md §3): authenticate → rate limit →
 * find → tenant/scope/role/pattern → size → validate → run on the owning subgraph (which checks
 * reach and input again before running; the gateway's own tools run in this process, checked once: here).
 */
export class InvokePipeline {
  readonly #identity: IdentityStore;
  readonly #limiter: RateLimiter;
  readonly #catalog: Catalog;
  readonly #forwarder: SubgraphForwarder;
  readonly #signer: AssertionSigner;
  readonly #governance: Governance;
  readonly #local: ToolOwner;
  readonly #publicUrl: string;
  /** Each workspace's share of this gateway: the calls of one workspace it runs at once (issue 33). */
  readonly fairShare: FairShare;
  /** Told of each call held for approval (not of replays): the owners' e-mail (gateway/src/pages/notify.ts). */
  onHeld: ((principal: Principal, approvalId: string) => void) | null = null;

  constructor(deps: { identity: IdentityStore; limiter: RateLimiter; catalog: Catalog; forwarder: SubgraphForwarder; signer: AssertionSigner; governance: Governance; local: ToolOwner; publicUrl?: string; fairShare?: FairShare }) {
    this.#publicUrl = deps.publicUrl ?? '';
    this.fairShare = deps.fairShare ?? new FairShare(fairShareFromEnv());
    this.#local = deps.local;
    this.#identity = deps.identity;
    this.#limiter = deps.limiter;
    this.#catalog = deps.catalog;
    this.#forwarder = deps.forwarder;
    this.#signer = deps.signer;
    this.#governance = deps.governance;
  }

  /** Step 1: who is calling. */
  async authenticate(authorization: string | undefined): Promise<Principal> {
    const token = bearerToken(authorization);
    // `nk_…` is an API key; anything else is taken for an OAuth access token (CONTRACT.md §5).
    return token.startsWith('nk_') ? this.#identity.authenticateApiKey(token) : this.#identity.authenticateAccessToken(token);
  }

  /**
   * The `Cuadra-Version` an answer to `principal` states: the one the request asked for, else the
   * version its workspace is pinned to. An unknown version is refused (`invalid_input`).
   */
  async versionFor(principal: Principal, header: string | undefined): Promise<Record<string, string>> {
    return this.#knownVersion(principal, header) ?? { [VERSION_HEADER]: await this.#identity.pinnedVersion(principal.workspace) };
  }

  /** {@link versionFor} without an await, when the version is asked for or this process knows the pin; else undefined. */
  #knownVersion(principal: Principal, header: string | undefined): Record<string, string> | undefined {
    const version = requestedVersion(header) ?? this.#identity.knownPin(principal.workspace);
    return version === undefined ? undefined : { [VERSION_HEADER]: version };
  }

  /** Checks `X-Tenant-Id`: it may only name the credential's own workspace. */
  static checkTenant(principal: Principal, tenant: string | undefined): void {
    if (tenant !== undefined && tenant !== principal.workspace) {
      throw new CuadraError('policy_denied', 'X-Tenant-Id names a workspace this credential does not belong to.');
    }
  }

  /**
   * Runs a read tool as an already authenticated caller, for the canvas (result blocks): find →
   * reach → validate → the owner (a subgraph checks again; the gateway's own owner does not repeat
   * this process's checks), which writes the ledger entry. Answers the
   * tool's output; every refusal is thrown as a contract error.
   */
  async invokeReadAs(principal: Principal, tool: string, input: Record<string, unknown>): Promise<Record<string, unknown>> {
    const entry = this.#catalog.get(tool);
    if (!entry) throw new CuadraError('unknown_tool', `No tool is named "${tool}".`);
    if (entry.risk !== 'read') throw new CuadraError('policy_denied', `${tool} is not a read tool; a dashboard block only reads.`);
    assertReach(principal, entry);
    this.#catalog.validate(entry.name, input);
    const answer = entry.subgraph === 'gateway'
      ? await this.#local.callPrechecked({ tool: entry.name, input, principal })
      : await this.#forwarder.invoke(entry.subgraph, entry.name, input, this.#signer.for(principal), { checked: true });
    if (answer.status === 200) return (answer.body as { output: Record<string, unknown> }).output;
    throw errorFromBody(answer.body);
  }

  /**
   * Steps 1 and 2 together: who is calling, and the call counted — for an API key this process
   * has checked before, one Redis round trip for both (IdentityStore.authenticateApiKeyCounted).
   * Throws an authentication refusal; a limiter refusal is `count`'s (countedHeaders throws it),
   * for the caller to answer (and record) as the refusal of a known caller.
   */
  async authenticateCounted(authorization: string | undefined): Promise<{ principal: Principal; count: RateCount }> {
    const token = bearerToken(authorization);
    if (token.startsWith('nk_')) {
      const { principal, count } = await this.#identity.authenticateApiKeyCounted(token, this.#limiter);
      return { principal, count: count ?? (await this.#limiter.count(principal)) };
    }
    const principal = await this.#identity.authenticateAccessToken(token);
    return { principal, count: await this.#limiter.count(principal) };
  }

  async invoke(req: InvokeRequest): Promise<InvokeResult> {
    // A surface's gate may have authenticated (and counted) this request already (`/graphql`, `/mcp`).
    const { principal, count } = req.principal
      ? { principal: req.principal, count: req.counted ?? (await this.#limiter.count(req.principal)) }
      : await this.authenticateCounted(req.authorization);
    const call = new Call(principal, req);
    try {
      // Cached (the pin read once per workspace): no await on the per-call path.
      call.headers = { ...countedHeaders(count), ...(this.#knownVersion(principal, req.version) ?? (await this.versionFor(principal, req.version))) };
    } catch (err) {
      return this.#refuse(call, err);
    }
    let entry: CatalogEntry;
    let input: unknown;
    try {
      entry = this.#find(call);
      input = this.#checkInput(call, entry, await req.body(entry.max_input_bytes));
    } catch (err) {
      return this.#refuse(call, err);
    }
    // The call's turn in its workspace's share: a workspace past its share waits (or is refused,
    // nothing done) here, not in front of every other workspace's calls downstream.
    let release;
    try {
      release = await this.fairShare.acquire(principal.workspace, req.signal);
    } catch (err) {
      // The caller left before its turn: nothing was done and nobody is there to be answered.
      if (req.signal?.aborted && (err as Error).name === 'AbortError') throw err;
      return this.#refuse(call, err);
    }
    let answer;
    try {
      answer = entry.subgraph === 'gateway'
        ? await this.#local.callPrechecked({ tool: entry.name, input: call.validInput!.value, principal, idempotencyKey: req.idempotencyKey, approvalId: req.approvalId, dryRun: req.dryRun })
        : await this.#forwarder.invoke(entry.subgraph, entry.name, input, this.#signer.for(principal), this.#forwardOptions(req));
    } catch (err) {
      const error = toCuadraError(err);
      // The gateway's own owner wrote the attempt's entry; a subgraph's answer, refusals included,
      // is not thrown. When the owner was unreachable, gave no answer of its own, or its answer never
      // came back (outcome_unknown), the entry is written here.
      if (entry.subgraph === 'gateway') throw new PipelineRefusal(error, call.headers);
      return this.#refuse(call, error);
    } finally {
      release();
    }
    return this.#settle(call, answer);
  }

  /**
   * The REST fast pass (issue 33, the hop): {@link invoke} without a turn of the event loop between
   * the request's head and the dispatch to the owner, for a call that needs no await on the way —
   * an API key whose principal this process keeps, counted from the block it holds, the version
   * known, a subgraph's tool, the body already arrived, a fair-share slot free. The same steps as
   * {@link invoke} (the same functions, in the same order); `done` is told the result or the refusal
   * as `invoke` would resolve or reject. Answers false when the call is not for this pass, having
   * recorded on `req` whatever it took (the principal and its count, the body read) so that
   * `invoke(req)` goes on from there: every refusal decided in the gateway is `invoke`'s, which
   * checks again and answers it (so no refusal is written twice).
   */
  invokeNow(req: InvokeRequest, bodyNow: (limitBytes: number) => SentJson | null, done: (err: unknown, result?: InvokeResult) => void): boolean {
    if (!req.principal) {
      let taken;
      try {
        const token = bearerToken(req.authorization);
        taken = token.startsWith('nk_') ? this.#identity.apiKeyCountedNow(token, this.#limiter) : null;
      } catch {
        return false;
      }
      if (!taken) return false;
      req.principal = taken.principal;
      req.counted = taken.count;
    }
    if (!req.counted) return false;
    const call = new Call(req.principal, req);
    let entry: CatalogEntry;
    let input: unknown;
    try {
      const version = this.#knownVersion(call.principal, req.version);
      if (!version) return false;
      call.headers = { ...countedHeaders(req.counted), ...version };
      entry = this.#find(call);
      if (entry.subgraph === 'gateway') return false;
    } catch {
      return false;
    }
    let body;
    try {
      body = bodyNow(entry.max_input_bytes);
    } catch (err) {
      req.body = () => Promise.reject(err);
      return false;
    }
    if (body === null) return false;
    req.body = () => Promise.resolve(body);
    try {
      input = this.#checkInput(call, entry, body);
    } catch {
      return false;
    }
    const release = this.fairShare.tryAcquire(call.principal.workspace);
    if (!release) return false;
    this.#forwarder.dispatch(entry.subgraph, entry.name, input, this.#signer.for(call.principal), this.#forwardOptions(req), (err, answer) => {
      release();
      if (err) {
        this.#refuse(call, toCuadraError(err)).catch((refusal: unknown) => done(refusal));
        return;
      }
      let result;
      try {
        result = this.#settle(call, answer!);
      } catch (refusal) {
        done(refusal);
        return;
      }
      done(null, result);
    });
    return true;
  }

  /** Steps 3–4 for a counted caller: find → tenant/scope/role/pattern → the Idempotency-Key's form. The tool's entry, or a refusal thrown. */
  #find(call: Call): CatalogEntry {
    const { req, principal } = call;
    const entry = this.#catalog.get(req.tool);
    if (!entry) throw new CuadraError('unknown_tool', `No tool is named "${req.tool}". GET /v1/tools lists the tools this credential reaches.`);
    call.risk = entry.risk;
    // A deprecated tool says so on every answer, refusals included (RFC 9745, RFC 8594).
    if (entry.deprecated) call.headers = { ...call.headers, ...deprecationHeaders(entry.deprecated, entry.name, this.#publicUrl) };
    InvokePipeline.checkTenant(principal, req.tenant);
    assertReach(principal, entry);
    if (req.idempotencyKey !== undefined && !/^[\x21-\x7e]{1,255}$/.test(req.idempotencyKey)) {
      throw new CuadraError('invalid_input', 'The Idempotency-Key header must be 1 to 255 visible ASCII characters.', { field: '' });
    }
    return entry;
  }

  /** Steps 5–6 on the body read (size was the reader's): validated, it is the call's input — a {@link SentJson} when its text was kept, sent as that text. */
  #checkInput(call: Call, entry: CatalogEntry, body: unknown): unknown {
    const value = body instanceof SentJson ? body.value : body;
    this.#catalog.validate(entry.name, value);
    call.validInput = { value, schema: entry.input_schema };
    return body;
  }

  #forwardOptions(req: InvokeRequest): ForwardOptions {
    return { idempotencyKey: req.idempotencyKey, approvalId: req.approvalId, checked: true, dryRun: req.dryRun };
  }

  /** Refusals decided here get their ledger entry here (what reaches the owner is recorded there); rejects with the refusal and the headers gathered. */
  async #refuse(call: Call, err: unknown): Promise<never> {
    const error = toCuadraError(err);
    const { principal, req, validInput } = call;
    const written = await this.#governance.ledger.append({
      principal, tool: req.tool, risk: call.risk, input_digest: validInput ? toolInputDigest(validInput.value, secretShape(validInput.schema), principal.workspace) : null, outcome: error.code, idempotency_key: req.idempotencyKey,
      duration_ms: Date.now() - call.started,
    }).catch(() => undefined);
    if (written?.receipt) call.headers = { ...call.headers, 'Ledger-Receipt': written.receipt };
    throw new PipelineRefusal(error, { ...call.headers, ...((error.extra as { headers?: Record<string, string> }).headers ?? {}) });
  }

  /** The owner's answer as the pipeline's result: the headers it brings, the hold's notice; a refusal of the owner thrown with the headers gathered. */
  #settle(call: Call, answer: OwnedAnswer): InvokeResult {
    let headers = call.headers;
    if (answer.replayed) headers = { ...headers, 'Idempotent-Replayed': 'true' };
    if (answer.receipt) headers = { ...headers, 'Ledger-Receipt': answer.receipt };
    if (answer.retryAfter) headers = { ...headers, 'Retry-After': answer.retryAfter };
    if (answer.status === 202 && !answer.replayed && this.onHeld) {
      const approvalId = (answer.body as { approval_id?: unknown }).approval_id;
      if (typeof approvalId === 'string') this.onHeld(call.principal, approvalId);
    }
    if (answer.status === 200 || answer.status === 202) {
      // A subgraph's answer keeps its bytes: a surface that relays it (REST) sends them as they came.
      const relayed = answer instanceof RelayedAnswer ? answer : null;
      return { status: answer.status, get body() { return answer.body as InvokeResult['body']; }, headers, json: relayed?.json };
    }
    const error = errorFromBody(answer.body);
    if (statusOf(error.code) !== answer.status) throw new PipelineRefusal(toCuadraError(new Error(`owner answered ${answer.status} ${error.code}`)), headers);
    throw new PipelineRefusal(error, headers);
  }
}
