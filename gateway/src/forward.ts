import { ASSERTION_HEADER, CHECKED_CALL_HEADER, checkedCallsFromEnv, CuadraError, OUTCOME_UNKNOWN_MESSAGE, OWNER_ANSWER_HEADER, TOOL_INVOKE_PATH, type OwnedAnswer } from '@cuadra/shared';

/**
 * Failures that prove the request never reached the subgraph: the connection was never made.
 * Anything else after the request was handed to a socket (reset, closed, timed out) may have
 * reached it, so its outcome is unknown (CONTRACT.md §9).
 */
const NEVER_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT']);

/** True when the error proves nothing reached the subgraph. */
export function neverReached(err: unknown): boolean {
  for (let e = err as { code?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 5; e = e.cause as typeof e, depth++) {
    if (typeof e.code === 'string' && NEVER_SENT.has(e.code)) return true;
  }
  return false;
}
import { Pool, type Dispatcher } from 'undici';

/** The headers of an owner's answer the gateway reads (lower case); the rest are neither decoded nor kept. */
const READ_HEADERS = new Set([OWNER_ANSWER_HEADER, 'retry-after', 'idempotent-replayed', 'ledger-receipt']);
/** Their lengths: a header name of another length is passed over without being decoded. */
const READ_LENGTHS = new Set([...READ_HEADERS].map((h) => h.length));

/**
 * The largest owner's answer the gateway relays (`CUADRA_MAX_ANSWER_BYTES`, default 32 MiB; issue 33,
 * ready14). The largest legitimate answers are documents, PDFs and spreadsheets in base64: a stored
 * document is at most 512 KiB decoded (~0.7 MB in its answer), a count sheet at most 1,000 lines; list
 * answers are paged. An answer past this is not kept: the connection is dropped, and the caller hears
 * `outcome_unknown` (the call reached its owner, its outcome did not come back; docs/measurements.md).
 */
export const MAX_ANSWER = { bytes: Number(process.env.CUADRA_MAX_ANSWER_BYTES) > 0 ? Math.floor(Number(process.env.CUADRA_MAX_ANSWER_BYTES)) : 32 * 1_048_576 };

/** Why an owner's answer was dropped: larger than {@link MAX_ANSWER}. */
class AnswerTooLarge extends Error {
  readonly code = 'CUADRA_ANSWER_TOO_LARGE';
}

/** What a caller hears for an answer past {@link MAX_ANSWER}. */
const ANSWER_TOO_LARGE_MESSAGE = 'The owning service answered more than the gateway relays; its answer was dropped and the call may have been done. Retrying with the same Idempotency-Key is safe.';

/** An owner's answer as it came off the socket: status, the headers read, and the body's bytes. */
interface SocketAnswer {
  status: number;
  headers: Record<string, string | string[]>;
  body: Buffer;
}

/**
 * One call's undici handler (the dispatcher's own callbacks), in place of `Pool.request()`
 * (issue 33, the hop): `request()` wraps each call in an async resource, a response stream
 * (`Readable`) and a header object of every header, and `arrayBuffer()` reads that stream back —
 * about 10 µs of CPU per call here; this keeps the chunks and reads only the headers above. The
 * dispatcher's failures (refused connection, reset, timeouts) reach `onError` as they reach
 * `request()`'s promise, with the same errors.
 */
class AnswerCollector implements Dispatcher.DispatchHandler {
  readonly #resolve: (answer: SocketAnswer) => void;
  readonly #reject: (err: Error) => void;
  #status = 0;
  #headers: Record<string, string | string[]> = {};
  #chunks: Buffer[] = [];
  #size = 0;
  #abort: ((err?: Error) => void) | undefined;

  constructor(resolve: (answer: SocketAnswer) => void, reject: (err: Error) => void) {
    this.#resolve = resolve;
    this.#reject = reject;
  }

  onConnect(abort: (err?: Error) => void): void {
    this.#abort = abort;
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[]): boolean {
    // An informational head (1xx) is not the answer: its headers are not the answer's either.
    if (statusCode < 200) return true;
    this.#status = statusCode;
    for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
      if (!READ_LENGTHS.has(rawHeaders[i].length)) continue;
      const name = rawHeaders[i].toString('latin1').toLowerCase();
      if (!READ_HEADERS.has(name)) continue;
      const value = rawHeaders[i + 1].toString('latin1');
      const seen = this.#headers[name];
      // Sent twice: both, as undici's header object keeps them (and so neither is taken for a string).
      this.#headers[name] = seen === undefined ? value : Array.isArray(seen) ? [...seen, value] : [seen, value];
    }
    return true;
  }

  onData(chunk: Buffer): boolean {
    this.#size += chunk.length;
    if (this.#size > MAX_ANSWER.bytes) {
      // Nothing more is kept: the request is aborted (its socket closed) and onError answers.
      this.#chunks = [];
      this.#abort?.(new AnswerTooLarge(`The owner's answer passed ${MAX_ANSWER.bytes} bytes; dropped.`));
      return false;
    }
    this.#chunks.push(chunk);
    return true;
  }

  onComplete(): void {
    const body = this.#chunks.length === 1 ? this.#chunks[0] : Buffer.concat(this.#chunks);
    this.#resolve({ status: this.#status, headers: this.#headers, body });
  }

  onError(err: Error): void {
    this.#reject(err);
  }
}

/**
 * A tool's input as the caller sent it: the parsed value (what the gateway checks) and the exact
 * JSON text it was parsed from, which goes to the owner as it came (issue 33, the hop): parsing the
 * text again gives the very value checked — JSON.parse on both sides, and the gateway's validation
 * neither coerces nor fills in defaults —, so serialising it again would only cost time.
 */
export class SentJson {
  readonly value: unknown;
  readonly text: string;
  constructor(value: unknown, text: string) {
    this.value = value;
    this.text = text;
  }
}

/**
 * The owner's answer as it came over the hop: status, headers and the body's JSON bytes, parsed
 * only when someone reads `body` (the REST surface relays `json` as it is: a read's output is
 * neither parsed nor serialised again in the gateway).
 */
export class RelayedAnswer implements OwnedAnswer {
  readonly status: number;
  readonly json: Buffer;
  readonly replayed: boolean | undefined;
  readonly receipt: string | undefined;
  readonly retryAfter: string | undefined;
  #body: Record<string, unknown> | undefined;

  constructor(status: number, json: Buffer, headers: Record<string, string | string[] | undefined>) {
    this.status = status;
    this.json = json;
    this.replayed = headers['idempotent-replayed'] === 'true' ? true : undefined;
    const receipt = headers['ledger-receipt'];
    this.receipt = typeof receipt === 'string' ? receipt : undefined;
    const retryAfter = headers['retry-after'];
    this.retryAfter = typeof retryAfter === 'string' ? retryAfter : undefined;
  }

  get body(): Record<string, unknown> {
    this.#body ??= JSON.parse(this.json.toString('utf8')) as Record<string, unknown>;
    return this.#body;
  }
}

/** How a call goes to its owner (see {@link SubgraphForwarder.invoke}). */
export interface ForwardOptions {
  idempotencyKey?: string;
  approvalId?: string;
  checked?: boolean;
  dryRun?: boolean;
}

/**
 * A replica's answer as the owner's: its own (marked `Cuadra-Owner-Answer`), else the subgraph's fair
 * share refusing before the call ran (`rate_limited`, nothing done), else a fault between gateway and
 * subgraph (`internal`).
 */
function ownerAnswer(subgraph: string, res: SocketAnswer): RelayedAnswer {
  const answer = new RelayedAnswer(res.status, res.body, res.headers);
  if (res.headers[OWNER_ANSWER_HEADER] === '1') return answer;
  if (answer.status === 429) {
    // The subgraph's fair share refused the call before it ran (shared/src/fair-share.ts): nothing was done there.
    const retryAfter = res.headers['retry-after'];
    throw new CuadraError('rate_limited', 'This workspace has too many calls running on the owning service; nothing was done. Wait and retry.', { extra: { headers: { 'Retry-After': typeof retryAfter === 'string' ? retryAfter : '1' } } });
  }
  // The route refused before the owner saw the call (assertion, request shape): a fault between gateway and subgraph.
  throw new CuadraError('internal', 'The owning service gave no answer.', { cause: new Error(`${subgraph} answered ${answer.status}: ${answer.json.toString('utf8').slice(0, 200)}`) });
}

/**
 * Sends invokes straight to the owning subgraph's `POST /invoke` over kept-alive connections (one
 * undici pool per subgraph replica), skipping the query planner and GraphQL: a tool call is one
 * field on one subgraph, so there is nothing to plan. The subgraph answers as the REST surface does
 * (status, body, `Ledger-Receipt`, `Idempotent-Replayed`), so nothing is decoded and encoded again.
 *
 * A subgraph given several replicas has its calls taken in turn; a replica that provably never got
 * the call (no connection) is skipped to the next, and only a call no replica could be reached for
 * is `unavailable`. A call that may have reached a replica is never sent to another: its outcome is
 * unknown (CONTRACT.md §9) and only the caller's idempotency key may retry it.
 */
export class SubgraphForwarder {
  readonly #replicas = new Map<string, { pools: Pool[]; next: number }>();
  readonly #urls: Record<string, string | readonly string[]>;
  readonly #vouching = checkedCallsFromEnv();

  constructor(urls: Record<string, string | readonly string[]>) {
    this.#urls = urls;
  }

  #replicasOf(subgraph: string): { pools: Pool[]; next: number } {
    let replicas = this.#replicas.get(subgraph);
    if (!replicas) {
      const urls = this.#urls[subgraph];
      const list = typeof urls === 'string' ? [urls] : [...(urls ?? [])];
      if (list.length === 0) throw new CuadraError('internal', 'The owning service has no address.', { cause: new Error(`no URL for subgraph ${subgraph}`) });
      replicas = { pools: list.map((url) => new Pool(url, { connections: 64, keepAliveTimeout: 30_000, headersTimeout: 60_000, bodyTimeout: 60_000 })), next: 0 };
      this.#replicas.set(subgraph, replicas);
    }
    return replicas;
  }

  /**
   * Runs a tool on its subgraph; resolves to the owner's answer (status and body, refusals and
   * the owner's own failures included: it wrote the attempt's ledger entry). `checked`: the caller
   * has checked this call's reach, bounds and schema, and the forwarder vouches for it, so the owner
   * does not check again (shared/src/checked-call.ts). `input` may be a {@link SentJson}: its text is
   * sent. Throws `unavailable` only when the request
   * provably never reached the subgraph (no connection), `outcome_unknown` when it was sent and no
   * answer came back, `internal` for an answer the owner did not give.
   */
  invoke(subgraph: string, tool: string, input: unknown, assertion: string, options: ForwardOptions = {}): Promise<RelayedAnswer> {
    return new Promise((resolve, reject) => {
      this.dispatch(subgraph, tool, input, assertion, options, (err, answer) => (err ? reject(err) : resolve(answer!)));
    });
  }

  /**
   * {@link invoke} with a callback instead of a promise (the REST fast pass: no promise between the
   * socket and the answer). `done` is called once, with the error {@link invoke} would reject with,
   * or with the answer; possibly before this returns (a pool that refuses at once).
   */
  dispatch(subgraph: string, tool: string, input: unknown, assertion: string, options: ForwardOptions, done: (err: unknown, answer?: RelayedAnswer) => void): void {
    let replicas: { pools: Pool[]; next: number };
    let request: Dispatcher.DispatchOptions;
    try {
      // The envelope JSON.stringify({tool, input, idempotencyKey, approvalId, dryRun?}) would write, with a sent input's own text in it.
      const inputJson = input instanceof SentJson ? input.text : JSON.stringify(input);
      const body = `{"tool":${JSON.stringify(tool)},"input":${inputJson},"idempotencyKey":${JSON.stringify(options.idempotencyKey ?? null)},"approvalId":${JSON.stringify(options.approvalId ?? null)}${options.dryRun ? ',"dryRun":true' : ''}}`;
      // Name, value, name, value: undici reads a flat list as it is (an object is walked key by key).
      const headers = ['content-type', 'application/json', ASSERTION_HEADER, assertion];
      if (options.checked && this.#vouching) headers.push(CHECKED_CALL_HEADER, this.#vouching.vouch(assertion, body));
      replicas = this.#replicasOf(subgraph);
      request = { path: TOOL_INVOKE_PATH, method: 'POST', headers, body };
    } catch (err) {
      done(err);
      return;
    }
    const first = replicas.next;
    replicas.next = (first + 1) % replicas.pools.length;
    let refused: unknown;
    const attempt = (tried: number): void => {
      if (tried === replicas.pools.length) {
        done(new CuadraError('unavailable', `The ${subgraph} service is not answering; nothing was done. Try again shortly.`, { cause: refused }));
        return;
      }
      replicas.pools[(first + tried) % replicas.pools.length].dispatch(request, new AnswerCollector((res) => {
        let answer: RelayedAnswer;
        try {
          answer = ownerAnswer(subgraph, res);
        } catch (err) {
          done(err);
          return;
        }
        done(null, answer);
      }, (err) => {
        // Only a replica that provably never got the call is passed over; anything else may have run it.
        if (!neverReached(err)) {
          done(new CuadraError('outcome_unknown', err instanceof AnswerTooLarge ? ANSWER_TOO_LARGE_MESSAGE : OUTCOME_UNKNOWN_MESSAGE, { cause: err }));
          return;
        }
        refused = err;
        attempt(tried + 1);
      }));
    };
    attempt(0);
  }

  async close(): Promise<void> {
    await Promise.all([...this.#replicas.values()].flatMap((r) => r.pools.map((p) => p.close())));
  }
}
