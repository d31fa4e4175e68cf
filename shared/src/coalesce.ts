/**
 * Writes of many callers sent as one command, group-commit style: a write asked for while none is
 * in flight goes out at the end of the current turn (with whatever else was asked in that turn); one
 * asked while a command is in flight waits for it and goes out with everything that queued meanwhile.
 * An idle process adds no wait; a busy one sends one command for many callers instead of one each.
 *
 * `send` gets the items in the order they were asked and answers, per item, `null` (done) or the
 * error that item alone gets (a duplicate key at its index); if `send` throws, every item of that
 * command gets the error. Nothing is retried here: each caller decides, as it would for its own command.
 */
export class Coalescer<T> {
  readonly #send: (items: T[]) => Promise<(Error | null)[]>;
  readonly #max: number;
  #queue: { item: T; resolve: () => void; reject: (err: unknown) => void }[] = [];
  #inFlight = false;
  #scheduled = false;

  constructor(send: (items: T[]) => Promise<(Error | null)[]>, options: { maxPerCommand?: number } = {}) {
    this.#send = send;
    this.#max = options.maxPerCommand ?? 500;
  }

  add(item: T): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#queue.push({ item, resolve, reject });
      this.#schedule();
    });
  }

  #schedule(): void {
    if (this.#scheduled || this.#inFlight || this.#queue.length === 0) return;
    this.#scheduled = true;
    process.nextTick(() => {
      this.#scheduled = false;
      void this.#flush();
    });
  }

  async #flush(): Promise<void> {
    if (this.#inFlight || this.#queue.length === 0) return;
    const batch = this.#queue.splice(0, this.#max);
    this.#inFlight = true;
    try {
      const results = await this.#send(batch.map((b) => b.item));
      batch.forEach((b, i) => (results[i] ? b.reject(results[i]) : b.resolve()));
    } catch (err) {
      for (const b of batch) b.reject(err);
    } finally {
      this.#inFlight = false;
      this.#schedule();
    }
  }
}

/**
 * Runs one bulk write for `count` items and answers per item as {@link Coalescer}'s `send` must:
 * all `null` when it succeeds; when it failed for some items only (a MongoDB bulk write error's
 * `writeErrors`, each with its `index`), that item's error and `null` for the others; any other
 * failure is thrown (every item of the command gets it).
 */
export async function eachItem(count: number, write: () => Promise<unknown>): Promise<(Error | null)[]> {
  try {
    await write();
    return Array.from({ length: count }, () => null);
  } catch (err) {
    const e = err as { writeErrors?: { index: number; code?: number; errmsg?: string }[] | { index: number; code?: number; errmsg?: string } };
    const list = Array.isArray(e?.writeErrors) ? e.writeErrors : e?.writeErrors ? [e.writeErrors] : [];
    if (list.length === 0) throw err;
    const out: (Error | null)[] = Array.from({ length: count }, () => null);
    for (const w of list) out[w.index] = Object.assign(new Error(w.errmsg ?? `write error ${w.code}`), { code: w.code });
    return out;
  }
}
