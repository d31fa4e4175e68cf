import { createHmac, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { checkedCalls, VOUCH_PREFIXES_MAX } from '../src/checked-call.ts';

/** The vouch as `createHmac` makes it: what every owner of an earlier version checks. */
const reference = (key: Buffer, assertion: string, body: string | Buffer) => createHmac('sha256', key).update(assertion).update('\n').update(body).digest('base64url');

describe('checked calls: the vouch from kept SHA-256 states (issue 33, the hop)', () => {
  const key = randomBytes(32);
  const calls = checkedCalls(key);

  it('is HMAC-SHA-256 over assertion, newline and body, byte for byte, first use and kept', () => {
    const assertion = `eyJhbGciOiJFUzI1NiJ9.${'a'.repeat(600)}.sig`;
    for (const body of ['{"tool":"parties.list","input":{"limit":8}}', '', Buffer.from('{"ñ":"€"}'), 'x'.repeat(5000)]) {
      const first = calls.vouch(assertion, body);
      expect(first).toBe(reference(key, assertion, body));
      // The prefix is kept now; a second call (and another body) still gives the reference's MAC.
      expect(calls.vouch(assertion, body)).toBe(first);
      expect(calls.vouched(first, assertion, Buffer.from(body))).toBe(true);
    }
    // Assertions not ASCII, and one the length of a SHA-256 block around the newline.
    for (const a of ['é'.repeat(40), 'b'.repeat(63), 'c'.repeat(64), 'd'.repeat(55)]) expect(calls.vouch(a, '{}')).toBe(reference(key, a, '{}'));
  });

  it('never lends one assertion\'s vouch to another (another workspace), nor to another body', () => {
    const a = 'header.{"workspace":"ws_a","actor":"key_1"}.sig';
    const b = 'header.{"workspace":"ws_b","actor":"key_1"}.sig';
    const body = '{"tool":"parties.list","input":{}}';
    const forA = calls.vouch(a, body);
    const forB = calls.vouch(b, body);
    expect(forA).not.toBe(forB);
    expect(forB).toBe(reference(key, b, body));
    expect(calls.vouched(forA, b, Buffer.from(body))).toBe(false);
    expect(calls.vouched(forA, a, Buffer.from(body))).toBe(true);
    expect(calls.vouched(forA, a, Buffer.from(`${body} `))).toBe(false);
    // Another key (another deployment) does not accept it either.
    expect(checkedCalls(randomBytes(32)).vouched(forA, a, Buffer.from(body))).toBe(false);
  });

  it('keeps at most VOUCH_PREFIXES_MAX assertions, and answers the same past the bound', () => {
    const bounded = checkedCalls(key);
    for (let i = 0; i < VOUCH_PREFIXES_MAX * 2 + 7; i++) {
      const assertion = `assertion-${i}`;
      const mac = bounded.vouch(assertion, '{}');
      if (i % 97 === 0) expect(mac).toBe(reference(key, assertion, '{}'));
      expect(bounded.keptPrefixes()).toBeLessThanOrEqual(VOUCH_PREFIXES_MAX);
    }
    expect(bounded.keptPrefixes()).toBeGreaterThan(0);
    // An assertion dropped from the kept ones is made again, the same.
    expect(bounded.vouch('assertion-0', '{}')).toBe(reference(key, 'assertion-0', '{}'));
  });
});
