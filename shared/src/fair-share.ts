import { CuadraError } from './errors.ts';

/** How much of one process a workspace may hold at once (`FAIR_SHARE_SLOTS`, `FAIR_SHARE_CONTENDED_SLOTS`, `FAIR_SHARE_QUEUE`, `FAIR_SHARE_WAIT_MS`). */
export interface FairShareLimits {
  /** Calls of one workspace running at once in this process while no other workspace is calling it; the rest wait their turn. */
  slots: number;
  /**
   * Calls of one workspace running at once while another workspace has called this process in
   * the last {@link CONTENDED_MS} (at most `slots`; absent: `slots`, the share never narrows).
   */
  contendedSlots?: number;
  /** Calls of one workspace waiting at once; one more is refused `rate_limited`. */
  queue: number;
  /** Longest a call waits for a slot before it is refused `rate_limited` (nothing was done). */
  waitMs: number;
  /**
   * Pacing by time (issue 33): a workspace whose recent busy time in this process — the time its
   * calls held their slots, fading with {@link BUSY_FADE_MS} — is more than `pace` times another
   * workspace's holds its next call back while that other workspace has a call running here (at
   * least 1; 0 or absent: no pacing). The gateway paces (`FAIR_SHARE_PACE`, default 1.5); a
   * subgraph does not: it sees only its part of a call, and a workspace busy there by its own
   * calls' time may be the light one on the machine (a client calling back to back).
   */
  pace?: number;
}

/**
 * The defaults: 4 calls of a workspace at once per process while it is the only one calling, 1
 * while another workspace is calling too — on a 2-core machine, 4 heavy calls of one workspace at
 * once keep the cores busy (88–95 %, bench/scale.ts), and any other workspace's call then waits
 * for CPU at every hop: 3–4× its idle time; with 1 at once it is within 1.5× —, 64 waiting (a burst of 50
 * duplicates of one keyed call still waits and replays), 30 s of waiting at most, and a workspace
 * more than 1.5 times as busy as another held back while that one has a call running (at the gateway).
 */
export const FAIR_SHARE_DEFAULTS: Readonly<Required<FairShareLimits>> = { slots: 4, contendedSlots: 1, queue: 64, waitMs: 30_000, pace: 1.5 };

/** How long a workspace's last call counts as "calling" for the others' share (ms): a person's next click, an agent's next step. */
export const CONTENDED_MS = 1_000;

/**
 * How fast a workspace's busy time fades (ms, the time constant of an exponential decay): a call
 * that held its slot for 100 ms counts 37 ms a second later, 5 ms three seconds later.
 */
export const BUSY_FADE_MS = 1_000;

/** How often calls held back by pacing look again whether they may start (ms): a less busy workspace's long call, or its fading, lets them go. */
const PACE_RECHECK_MS = 20;

/** The limits from the environment (positive integers; `FAIR_SHARE_PACE` 0 or a number of at least 1; anything else is a configuration error, said at start). */
export function fairShareFromEnv(env: NodeJS.ProcessEnv = process.env): FairShareLimits {
  const read = (name: string, fallback: number, min: number): number => {
    const text = env[name];
    if (text === undefined || text === '') return fallback;
    const value = Number(text);
    if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be an integer of at least ${min}, not "${text}".`);
    return value;
  };
  const slots = read('FAIR_SHARE_SLOTS', FAIR_SHARE_DEFAULTS.slots, 1);
  const paceText = env.FAIR_SHARE_PACE;
  const pace = paceText === undefined || paceText === '' ? FAIR_SHARE_DEFAULTS.pace : Number(paceText);
  if (!Number.isFinite(pace) || (pace !== 0 && pace < 1)) throw new Error(`FAIR_SHARE_PACE must be 0 (no pacing) or a number of at least 1, not "${paceText}".`);
  return {
    slots,
    contendedSlots: Math.min(slots, read('FAIR_SHARE_CONTENDED_SLOTS', FAIR_SHARE_DEFAULTS.contendedSlots, 1)),
    queue: read('FAIR_SHARE_QUEUE', FAIR_SHARE_DEFAULTS.queue, 0),
    waitMs: read('FAIR_SHARE_WAIT_MS', FAIR_SHARE_DEFAULTS.waitMs, 1),
    pace,
  };
}

/** The part of an HTTP response {@link FairShare.holdForAnswer} watches (node's `ServerResponse`). */
export interface AnswerInFlight {
  /** True once the response has closed (answered, or the connection gone). */
  readonly closed: boolean;
  once(event: 'close', listener: () => void): unknown;
}

/** The rejection of a wait whose caller left. */
function abortError(signal: AbortSignal): Error {
  return signal.reason instanceof Error && signal.reason.name === 'AbortError' ? signal.reason : new DOMException('The caller left before its turn.', 'AbortError');
}

/** Gives a held slot back; a second call does nothing. */
export type ReleaseSlot = () => void;

interface Waiter {
  grant: (release: ReleaseSlot) => void;
  refuse: (error: CuadraError) => void;
  timer: NodeJS.Timeout;
}

/** One workspace's share: how many of its calls run, and who waits, first come first served. */
interface Lane {
  running: number;
  waiting: Waiter[];
  /** The sum of the start times of the running calls (ms): their busy time so far is `running × now − startedSum`. */
  startedSum: number;
}

/** A workspace's busy time of finished calls (ms), as it stood at `at`; it fades with {@link BUSY_FADE_MS}. */
interface Busy {
  ms: number;
  at: number;
}

/** What a finished calls' busy time has faded to by `now` (ms; none: 0). */
function faded(done: Busy | undefined, now: number): number {
  return done ? done.ms * Math.exp(-(now - done.at) / BUSY_FADE_MS) : 0;
}

/**
 * A fair share of one process per workspace (issue 33): at most `slots` calls of a workspace run
 * at once — `contendedSlots` while another workspace has called in the last {@link CONTENDED_MS},
 * so a busy workspace leaves the cores to the others' calls rather than queueing them behind its
 * own —, the next `queue` wait in arrival order, and any more — or one that waited `waitMs` —
 * is refused 429 `rate_limited` with `Retry-After` before it does anything. Another workspace's
 * call never waits behind them: each workspace has its own lane. A lane exists only while it has
 * calls, and a workspace is remembered as calling for {@link CONTENDED_MS} after its last call
 * (nothing kept per workspace seen).
 *
 * Pacing by time (`pace`, the gateway's): a workspace more than `pace` times as busy here as
 * another — busy time being the time its calls held their slots, fading over {@link BUSY_FADE_MS} —
 * holds its next call back while that other workspace has a call running, so a stream of one
 * workspace's calls leaves the machine to another's call but for the one already in flight.
 *
 * A narrowed share takes no running call away: the workspace's calls then start one by one as its
 * running ones end, and widen again as soon as the others have been quiet for {@link CONTENDED_MS}
 * (the next call given back or arriving lets the waiters in, up to `slots`).
 *
 * Per process on purpose: it shares this process's cores and connections, which are what a busy
 * workspace takes from the others; the rate limits (Redis) are what is shared between replicas.
 * The gateway holds a slot from a call's validation to its answer, a subgraph from the call's
 * arrival to its answer; a read one service makes of another for a call (service assertions)
 * takes none, so no call waits on a slot held by the call it serves.
 */
export class FairShare {
  readonly limits: Readonly<FairShareLimits>;
  readonly #lanes = new Map<string, Lane>();
  /** When each workspace last asked for a slot (ms), oldest first: the workspaces calling now. */
  readonly #calling = new Map<string, number>();
  /** Each recently busy workspace's busy time of finished calls (pacing); dropped once it has faded below a millisecond. */
  readonly #busy = new Map<string, Busy>();
  /** The timer that looks again at calls held back by pacing (set while some are). */
  #recheck: NodeJS.Timeout | undefined;
  /** Mean time a slot is held (ms, moving average): what a refused caller is told to wait. */
  #heldMs = 50;
  readonly #now: () => number;

  /** @param now the clock the contention window and busy times are read on (tests move it by hand). */
  constructor(limits: FairShareLimits = FAIR_SHARE_DEFAULTS, now: () => number = () => performance.now()) {
    this.limits = { ...limits, contendedSlots: Math.min(limits.slots, limits.contendedSlots ?? limits.slots), pace: limits.pace ?? 0 };
    this.#now = now;
  }

  /** How many calls of `workspace` may run now: `slots`, or `contendedSlots` while another workspace is calling. */
  slotsFor(workspace: string): number {
    const since = this.#now() - CONTENDED_MS;
    // Oldest first: forget the workspaces quiet for the whole window.
    for (const [ws, at] of this.#calling) {
      if (at >= since) break;
      this.#calling.delete(ws);
    }
    const others = this.#calling.size - (this.#calling.has(workspace) ? 1 : 0);
    return others > 0 ? this.limits.contendedSlots! : this.limits.slots;
  }

  /** `workspace`'s recent busy time in this process (ms): its finished calls' held time, faded, and its running calls' time so far. */
  busyMs(workspace: string, now = this.#now()): number {
    const done = this.#busy.get(workspace);
    const lane = this.#lanes.get(workspace);
    return faded(done, now) + (lane ? lane.running * now - lane.startedSum : 0);
  }

  /**
   * Whether `workspace` holds back its next call (pacing): another workspace has a call running
   * here and its recent busy time here is less than `workspace`'s by more than `pace` times. Two
   * workspaces about as busy as each other run side by side; a much busier one lets the other's
   * calls through first. Nobody waits for good: while it waits, a workspace's busy time fades and
   * the running one's grows.
   */
  #paced(workspace: string): boolean {
    const pace = this.limits.pace!;
    if (pace === 0 || this.#lanes.size < 2) return false;
    const now = this.#now();
    const mine = this.busyMs(workspace, now);
    for (const [ws, lane] of this.#lanes) {
      if (ws !== workspace && lane.running > 0 && pace * this.busyMs(ws, now) < mine) return true;
    }
    return false;
  }

  /** Forgets the busy time of workspaces with no call here whose busy time has faded below a millisecond (oldest first): nothing kept per workspace seen. */
  #forgetFaded(now: number): void {
    for (const [ws, done] of this.#busy) {
      if (faded(done, now) >= 1) break;
      if (!this.#lanes.has(ws)) this.#busy.delete(ws);
    }
  }

  /** Lets waiting calls of the lane in while it has fewer running than its share allows now and pacing does not hold it back. */
  #fill(workspace: string, lane: Lane): void {
    const cap = this.slotsFor(workspace);
    while (lane.waiting.length > 0 && lane.running < cap) {
      if (this.#paced(workspace)) {
        this.#recheckLater();
        return;
      }
      const next = lane.waiting.shift()!;
      clearTimeout(next.timer);
      next.grant(this.#start(workspace, lane));
    }
  }

  /** Lets in the waiting calls of every lane, the least busy workspace first (a slot given back, or busy times faded, may free any of them). */
  #fillAll(): void {
    // Called at every slot given back while pacing is on: nothing is built when nobody waits.
    let waiting = false;
    for (const lane of this.#lanes.values()) if (lane.waiting.length > 0) waiting = true;
    if (!waiting) return;
    const now = this.#now();
    const lanes = [...this.#lanes].filter(([, lane]) => lane.waiting.length > 0).sort(([a], [b]) => this.busyMs(a, now) - this.busyMs(b, now));
    for (const [ws, lane] of lanes) this.#fill(ws, lane);
  }

  /** Looks again, soon, at calls held back by pacing: a less busy workspace's long call, or the fading, may let them go without any slot given back. */
  #recheckLater(): void {
    if (this.#recheck) return;
    this.#recheck = setTimeout(() => {
      this.#recheck = undefined;
      this.#fillAll();
    }, PACE_RECHECK_MS);
    this.#recheck.unref();
  }

  /** Runs `work` in one of `workspace`'s slots (waiting for one if needed); refusals as {@link acquire}. */
  async run<T>(workspace: string, work: () => Promise<T>): Promise<T> {
    const release = await this.acquire(workspace);
    try {
      return await work();
    } finally {
      release();
    }
  }

  /**
   * A slot of `workspace`: at once while it has a free one, else when one is given back (in
   * arrival order). Rejects with `rate_limited` (429, `Retry-After` in `extra.headers`) when the
   * workspace already has `queue` calls waiting, or after `waitMs` without a slot; with the
   * signal's `AbortError` when `signal` aborts first (the caller left: its place in line is given
   * up, so no slot is ever granted to a call nobody will finish).
   */
  acquire(workspace: string, signal?: AbortSignal): Promise<ReleaseSlot> {
    if (signal?.aborted) return Promise.reject(abortError(signal));
    const lane = this.#laneCalling(workspace);
    if (this.#free(workspace, lane)) return Promise.resolve(this.#start(workspace, lane));
    if (lane.waiting.length >= this.limits.queue) return Promise.reject(this.#refusal(lane, 'has too many calls waiting'));
    const current = lane;
    return new Promise<ReleaseSlot>((grant, refuse) => {
      /** Takes this waiter out of the line (a no-op once granted); true when it was still waiting. */
      const withdraw = (): boolean => {
        const at = current.waiting.indexOf(waiter);
        if (at < 0) return false;
        current.waiting.splice(at, 1);
        clearTimeout(waiter.timer);
        signal?.removeEventListener('abort', left);
        // The lane goes with its last call: a line emptied by departures keeps nothing.
        if (current.running === 0 && current.waiting.length === 0 && this.#lanes.get(workspace) === current) this.#lanes.delete(workspace);
        return true;
      };
      const left = () => {
        if (withdraw()) refuse(abortError(signal!));
      };
      const waiter: Waiter = {
        grant: (release) => {
          signal?.removeEventListener('abort', left);
          grant(release);
        },
        refuse,
        timer: setTimeout(() => {
          if (withdraw()) refuse(this.#refusal(current, `waited ${Math.round(this.limits.waitMs / 1000)} s for its turn`));
        }, this.limits.waitMs),
      };
      waiter.timer.unref();
      signal?.addEventListener('abort', left, { once: true });
      current.waiting.push(waiter);
      // The share may have widened since the last call ended (the others went quiet).
      this.#fill(workspace, current);
    });
  }

  /**
   * A slot of `workspace` now, as {@link acquire} would grant it at once; null when the call would
   * wait or be refused (nothing taken: the caller then asks {@link acquire}). For a caller that
   * does not wait (the REST fast pass): no promise, no signal.
   */
  tryAcquire(workspace: string): ReleaseSlot | null {
    const lane = this.#laneCalling(workspace);
    if (this.#free(workspace, lane)) return this.#start(workspace, lane);
    // No lane is kept for a call that did not start here.
    if (lane.running === 0 && lane.waiting.length === 0) this.#lanes.delete(workspace);
    return null;
  }

  /** Marks `workspace` as calling now (re-inserted: the map stays oldest first) and answers its lane, made if it had none. */
  #laneCalling(workspace: string): Lane {
    this.#calling.delete(workspace);
    this.#calling.set(workspace, this.#now());
    let lane = this.#lanes.get(workspace);
    if (!lane) {
      lane = { running: 0, waiting: [], startedSum: 0 };
      this.#lanes.set(workspace, lane);
    }
    return lane;
  }

  /** Whether a call of the lane starts now. Nobody overtakes a waiting call: a free slot goes to the waiters first. */
  #free(workspace: string, lane: Lane): boolean {
    return lane.waiting.length === 0 && lane.running < this.slotsFor(workspace) && !this.#paced(workspace);
  }

  /**
   * A slot of `workspace` held for one HTTP answer: taken now or at the call's turn, given back
   * when `response` closes (answered, or the caller hung up). True when the call may run; false
   * when the caller hung up before its turn — its place in line was given up and nothing of it
   * may run. Refusals as {@link acquire}.
   *
   * Why not "acquire, then release on close": a caller who hangs up while waiting closes the
   * response before the slot is granted, and a listener added after that never fires — the slot
   * would be held for good, and after `slots` such callers the workspace would wait `waitMs` and
   * be refused on every call (a load generator stopping mid-burst did exactly that).
   */
  async holdForAnswer(workspace: string, response: AnswerInFlight): Promise<boolean> {
    const hungUp = new AbortController();
    let release: ReleaseSlot | undefined;
    response.once('close', () => {
      // Every response closes, answered or not: a held slot just goes back. Only a call still
      // waiting is withdrawn — an abort makes a DOMException (a stack trace) and dispatches an
      // event, which on every answered call was a tenth of the hop's own CPU (issue 33).
      if (release) release();
      else hungUp.abort();
    });
    // Closed before it even asked (the listener above will not fire again).
    if (response.closed) hungUp.abort();
    try {
      release = await this.acquire(workspace, hungUp.signal);
    } catch (err) {
      if (hungUp.signal.aborted && (err as Error).name === 'AbortError') return false;
      throw err;
    }
    // Granted in the same turn as the hang-up: the close has fired already, so give it back here.
    if (hungUp.signal.aborted) {
      release();
      return false;
    }
    return true;
  }

  /** Calls of `workspace` running and waiting now (0 and 0 when it has none). */
  load(workspace: string): { running: number; waiting: number } {
    const lane = this.#lanes.get(workspace);
    return { running: lane?.running ?? 0, waiting: lane?.waiting.length ?? 0 };
  }

  /** Workspaces with a call running or waiting. */
  get busyWorkspaces(): number {
    return this.#lanes.size;
  }

  /** Starts a call of the lane: counts it running (and its busy time from now) and answers how it gives its slot back. */
  #start(workspace: string, lane: Lane): ReleaseSlot {
    const since = this.#now();
    lane.running++;
    lane.startedSum += since;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const now = this.#now();
      this.#heldMs += (now - since - this.#heldMs) / 16;
      // Its time now counts among the finished calls' (fading from here on).
      const done = this.#busy.get(workspace);
      // Re-inserted: the map stays in the order of the last release, oldest first.
      this.#busy.delete(workspace);
      this.#busy.set(workspace, { ms: faded(done, now) + (now - since), at: now });
      this.#forgetFaded(now);
      lane.running--;
      lane.startedSum -= since;
      // The slot passes to the first waiters, as many as the share allows now: nobody arriving meanwhile overtakes them.
      this.#fill(workspace, lane);
      if (lane.running === 0 && lane.waiting.length === 0) this.#lanes.delete(workspace);
      // Another workspace's calls may have been held back while this one ran.
      if (this.limits.pace! > 0 && this.#lanes.size > 0) this.#fillAll();
    };
  }

  #refusal(lane: Lane, why: string): CuadraError {
    // The waiters ahead are served `slots` at a time: about that many slot-times, at least a second.
    const retryAfter = Math.max(1, Math.ceil((this.#heldMs * (lane.waiting.length + 1)) / Math.max(1, lane.running) / 1000));
    return new CuadraError('rate_limited', `This workspace ${why}: it already has ${lane.running} calls running and ${lane.waiting.length} waiting here. Nothing was done; wait ${retryAfter} s and retry.`, {
      extra: { headers: { 'Retry-After': String(retryAfter) } },
    });
  }
}
