// A fair share per workspace (shared/src/fair-share.ts, issue 33): slots, arrival order, the queue
// bound and the wait bound, and another workspace never waiting behind a busy one.
import { EventEmitter } from 'node:events';
import { describe, expect, it, vi } from 'vitest';
import { FairShare, fairShareFromEnv } from '../src/fair-share.ts';

/** A call that holds its slot until the test lets it go. */
function held(share: FairShare, workspace: string, order: string[], name: string) {
  let finish!: () => void;
  const done = new Promise<void>((r) => { finish = r; });
  const result = share.run(workspace, async () => {
    order.push(name);
    await done;
    return name;
  });
  return { result, finish };
}

const turn = () => new Promise((r) => setImmediate(r));

describe('FairShare', () => {
  it('runs `slots` calls of a workspace at once and the rest in arrival order, while another workspace runs at once', async () => {
    const share = new FairShare({ slots: 2, queue: 10, waitMs: 60_000 });
    const order: string[] = [];
    const a = ['a1', 'a2', 'a3', 'a4', 'a5'].map((n) => held(share, 'ws_a', order, n));
    await turn();
    expect(order).toEqual(['a1', 'a2']);
    expect(share.load('ws_a')).toEqual({ running: 2, waiting: 3 });
    // The other workspace is not behind ws_a's three waiting calls.
    const b = held(share, 'ws_b', order, 'b1');
    await turn();
    expect(order).toEqual(['a1', 'a2', 'b1']);
    b.finish();
    expect(await b.result).toBe('b1');
    // A slot given back goes to the first waiter, not to a call arriving meanwhile.
    a[1].finish();
    const late = held(share, 'ws_a', order, 'a6');
    await turn();
    expect(order).toEqual(['a1', 'a2', 'b1', 'a3']);
    for (const c of [a[0], a[2], a[3], a[4], late]) c.finish();
    expect(await Promise.all([...a.map((c) => c.result), late.result])).toEqual(['a1', 'a2', 'a3', 'a4', 'a5', 'a6']);
    expect(order).toEqual(['a1', 'a2', 'b1', 'a3', 'a4', 'a5', 'a6']);
    // Nothing is kept for a workspace with no calls.
    expect(share.busyWorkspaces).toBe(0);
  });

  it('refuses one call more than the queue holds with rate_limited and Retry-After, and that call never runs', async () => {
    const share = new FairShare({ slots: 1, queue: 2, waitMs: 60_000 });
    const order: string[] = [];
    const a = ['a1', 'a2', 'a3'].map((n) => held(share, 'ws_a', order, n));
    let ran = false;
    const refused = share.run('ws_a', async () => { ran = true; });
    await expect(refused).rejects.toMatchObject({ code: 'rate_limited', status: 429, extra: { headers: { 'Retry-After': expect.stringMatching(/^[1-9]\d*$/) } } });
    // Another workspace is not refused: its lane is empty.
    const b = held(share, 'ws_b', order, 'b1');
    await turn();
    expect(order).toEqual(['a1', 'b1']);
    b.finish();
    for (const c of a) c.finish();
    await Promise.all([b.result, ...a.map((c) => c.result)]);
    expect(ran).toBe(false);
    expect(order).toEqual(['a1', 'b1', 'a2', 'a3']);
  });

  it('refuses a call that waited longer than waitMs, leaves the queue to the others, and gives the slot on', async () => {
    const share = new FairShare({ slots: 1, queue: 5, waitMs: 30 });
    const order: string[] = [];
    const first = held(share, 'ws_a', order, 'a1');
    const waited = share.run('ws_a', async () => order.push('never'));
    await expect(waited).rejects.toMatchObject({ code: 'rate_limited' });
    expect(share.load('ws_a')).toEqual({ running: 1, waiting: 0 });
    first.finish();
    await first.result;
    expect(order).toEqual(['a1']);
    expect(share.busyWorkspaces).toBe(0);
  });

  it('gives a slot back when the work throws, and once only when released twice', async () => {
    const share = new FairShare({ slots: 1, queue: 5, waitMs: 60_000 });
    await expect(share.run('ws_a', async () => { throw new Error('boom'); })).rejects.toThrow('boom');
    expect(share.load('ws_a')).toEqual({ running: 0, waiting: 0 });
    const release = await share.acquire('ws_a');
    const next = share.acquire('ws_a');
    const other = share.acquire('ws_a');
    release();
    release();
    const secondRelease = await next;
    // The second release of the first slot did not hand a slot to the third caller.
    expect(share.load('ws_a')).toEqual({ running: 1, waiting: 1 });
    secondRelease();
    (await other)();
    expect(share.busyWorkspaces).toBe(0);
  });

  it('withdraws a waiting call whose caller left: it never runs, holds no place, and the slot goes to the next', async () => {
    const share = new FairShare({ slots: 1, queue: 5, waitMs: 60_000 });
    const order: string[] = [];
    const first = held(share, 'ws_a', order, 'a1');
    const left = new AbortController();
    const gone = share.acquire('ws_a', left.signal);
    const next = held(share, 'ws_a', order, 'a2');
    await turn();
    expect(share.load('ws_a')).toEqual({ running: 1, waiting: 2 });
    left.abort();
    await expect(gone).rejects.toMatchObject({ name: 'AbortError' });
    expect(share.load('ws_a')).toEqual({ running: 1, waiting: 1 });
    first.finish();
    await Promise.all([first.result, (async () => { await turn(); next.finish(); })(), next.result]);
    expect(order).toEqual(['a1', 'a2']);
    expect(share.busyWorkspaces).toBe(0);
    // Already left: refused at once, nothing taken.
    await expect(share.acquire('ws_a', AbortSignal.abort())).rejects.toMatchObject({ name: 'AbortError' });
    expect(share.busyWorkspaces).toBe(0);
  });

  it('holds a slot for an answer until its response closes, and gives up the turn of a caller who left while waiting', async () => {
    const share = new FairShare({ slots: 1, queue: 5, waitMs: 60_000 });
    const response = () => Object.assign(new EventEmitter(), { closed: false });
    const first = response();
    expect(await share.holdForAnswer('ws_a', first)).toBe(true);
    const waiting = response();
    const turnOf = share.holdForAnswer('ws_a', waiting);
    await turn();
    expect(share.load('ws_a')).toEqual({ running: 1, waiting: 1 });
    // The caller hangs up while waiting: no slot is taken for it, now or later.
    waiting.emit('close');
    expect(await turnOf).toBe(false);
    expect(share.load('ws_a')).toEqual({ running: 1, waiting: 0 });
    first.emit('close');
    expect(share.busyWorkspaces).toBe(0);
    // A caller that left before asking (the close already emitted) gets no turn either.
    const late = response();
    late.emit('close');
    late.closed = true;
    expect(await share.holdForAnswer('ws_a', late)).toBe(false);
    expect(share.busyWorkspaces).toBe(0);
  });

  it('gives the slot of an answered call back when its response closes without aborting anything (issue 33, the hop: an abort per call made a DOMException)', async () => {
    const share = new FairShare({ slots: 1, queue: 5, waitMs: 60_000 });
    const aborts = vi.spyOn(AbortController.prototype, 'abort');
    try {
      for (let i = 0; i < 3; i++) {
        const answered = Object.assign(new EventEmitter(), { closed: false });
        expect(await share.holdForAnswer('ws_a', answered)).toBe(true);
        answered.emit('close');
        expect(share.busyWorkspaces).toBe(0);
      }
      expect(aborts).not.toHaveBeenCalled();
    } finally {
      aborts.mockRestore();
    }
  });

  it('narrows a busy workspace to contendedSlots while another one calls — its running calls go on, the next start one by one — and widens it again once the other is quiet', async () => {
    let now = 0;
    const share = new FairShare({ slots: 3, contendedSlots: 1, queue: 10, waitMs: 60_000 }, () => now);
    const order: string[] = [];
    const a = ['a1', 'a2', 'a3'].map((n) => held(share, 'ws_a', order, n));
    await turn();
    // Alone, the whole share: three at once.
    expect(share.load('ws_a')).toEqual({ running: 3, waiting: 0 });
    const b = held(share, 'ws_b', order, 'b1');
    await turn();
    expect(order).toEqual(['a1', 'a2', 'a3', 'b1']);
    // ws_b calls: ws_a's next call waits until ws_a runs fewer than 1.
    const a4 = held(share, 'ws_a', order, 'a4');
    await turn();
    expect(share.load('ws_a')).toEqual({ running: 3, waiting: 1 });
    a[0].finish();
    a[1].finish();
    await Promise.all([a[0].result, a[1].result]);
    await turn();
    expect(share.load('ws_a')).toEqual({ running: 1, waiting: 1 });
    a[2].finish();
    await a[2].result;
    await turn();
    expect(order).toEqual(['a1', 'a2', 'a3', 'b1', 'a4']);
    b.finish();
    await b.result;
    // ws_b's last call was 1 s ago and none since: ws_a has its whole share again.
    now += 1_001;
    const more = ['a5', 'a6'].map((n) => held(share, 'ws_a', order, n));
    await turn();
    expect(share.load('ws_a')).toEqual({ running: 3, waiting: 0 });
    for (const c of [a4, ...more]) c.finish();
    await Promise.all([a4.result, ...more.map((c) => c.result)]);
    expect(order).toEqual(['a1', 'a2', 'a3', 'b1', 'a4', 'a5', 'a6']);
    expect(share.busyWorkspaces).toBe(0);
  });

  it('holds a much busier workspace\'s next call back while a less busy one has a call running — the other\'s later calls go ahead of it — and lets it in when that one ends (pacing)', async () => {
    let now = 0;
    const share = new FairShare({ slots: 2, queue: 10, waitMs: 60_000, pace: 1.5 }, () => now);
    const order: string[] = [];
    // ws_a has been busy: 400 ms of held slots.
    const a0 = await share.acquire('ws_a');
    now += 400;
    a0();
    expect(share.busyMs('ws_a')).toBe(400);
    const b1 = held(share, 'ws_b', order, 'b1');
    await turn();
    // ws_b runs (busy 0 so far): ws_a's next call waits although ws_a has both its slots free.
    const a1 = held(share, 'ws_a', order, 'a1');
    await turn();
    expect(share.load('ws_a')).toEqual({ running: 0, waiting: 1 });
    // ws_b's next call is not behind it.
    const b2 = held(share, 'ws_b', order, 'b2');
    await turn();
    expect(order).toEqual(['b1', 'b2']);
    b1.finish();
    await b1.result;
    await turn();
    expect(order).toEqual(['b1', 'b2']);
    b2.finish();
    await b2.result;
    await turn();
    // ws_b has nothing running: ws_a's call goes.
    expect(order).toEqual(['b1', 'b2', 'a1']);
    a1.finish();
    await a1.result;
    expect(share.busyWorkspaces).toBe(0);
  });

  it('without pacing (pace 0, the share without it) the busier workspace\'s call runs beside the other\'s at once', async () => {
    let now = 0;
    const share = new FairShare({ slots: 2, queue: 10, waitMs: 60_000, pace: 0 }, () => now);
    const order: string[] = [];
    const a0 = await share.acquire('ws_a');
    now += 400;
    a0();
    const b1 = held(share, 'ws_b', order, 'b1');
    const a1 = held(share, 'ws_a', order, 'a1');
    await turn();
    expect(order).toEqual(['b1', 'a1']);
    b1.finish();
    a1.finish();
    await Promise.all([b1.result, a1.result]);
  });

  it('runs two about as busy workspaces side by side, and lets a held-back call go once the other\'s long call has made that one about as busy (no wait for good)', async () => {
    let now = 0;
    const share = new FairShare({ slots: 2, queue: 10, waitMs: 60_000, pace: 1.5 }, () => now);
    const order: string[] = [];
    for (const [ws, ms] of [['ws_a', 400], ['ws_b', 300]] as const) {
      const slot = await share.acquire(ws);
      now += ms;
      slot();
    }
    // 400 ms against 300 ms: within 1.5 times, side by side.
    const b1 = held(share, 'ws_b', order, 'b1');
    const a1 = held(share, 'ws_a', order, 'a1');
    await turn();
    expect(order).toEqual(['b1', 'a1']);
    a1.finish();
    b1.finish();
    await Promise.all([a1.result, b1.result]);
    // ws_c, new here, runs a long call; ws_a (busier by far) waits for it…
    const c1 = held(share, 'ws_c', order, 'c1');
    const a2 = held(share, 'ws_a', order, 'a2');
    await turn();
    expect(share.load('ws_a')).toEqual({ running: 0, waiting: 1 });
    // …until ws_a's busy time has faded and ws_c's running call has counted long enough: 1 s on, ws_a 147 ms, ws_c 1,000 ms.
    now += 1_000;
    await expect.poll(() => order).toEqual(['b1', 'a1', 'c1', 'a2']);
    expect(share.load('ws_c')).toEqual({ running: 1, waiting: 0 });
    c1.finish();
    a2.finish();
    await Promise.all([c1.result, a2.result]);
    expect(share.busyWorkspaces).toBe(0);
  });

  it('reads its limits from the environment and refuses a malformed one', () => {
    expect(fairShareFromEnv({})).toEqual({ slots: 4, contendedSlots: 1, queue: 64, waitMs: 30_000, pace: 1.5 });
    expect(fairShareFromEnv({ FAIR_SHARE_SLOTS: '2', FAIR_SHARE_QUEUE: '0', FAIR_SHARE_WAIT_MS: '500' })).toEqual({ slots: 2, contendedSlots: 1, queue: 0, waitMs: 500, pace: 1.5 });
    expect(fairShareFromEnv({ FAIR_SHARE_PACE: '0' })).toMatchObject({ pace: 0 });
    expect(fairShareFromEnv({ FAIR_SHARE_PACE: '2.5' })).toMatchObject({ pace: 2.5 });
    expect(() => fairShareFromEnv({ FAIR_SHARE_PACE: '0.5' })).toThrow(/FAIR_SHARE_PACE/);
    expect(() => fairShareFromEnv({ FAIR_SHARE_PACE: 'fast' })).toThrow(/FAIR_SHARE_PACE/);
    // The contended share is never wider than the share.
    expect(fairShareFromEnv({ FAIR_SHARE_SLOTS: '2', FAIR_SHARE_CONTENDED_SLOTS: '9' })).toMatchObject({ slots: 2, contendedSlots: 2 });
    expect(() => fairShareFromEnv({ FAIR_SHARE_CONTENDED_SLOTS: '0' })).toThrow(/FAIR_SHARE_CONTENDED_SLOTS/);
    expect(() => fairShareFromEnv({ FAIR_SHARE_SLOTS: '0' })).toThrow(/FAIR_SHARE_SLOTS/);
    expect(() => fairShareFromEnv({ FAIR_SHARE_QUEUE: '1.5' })).toThrow(/FAIR_SHARE_QUEUE/);
  });
});
