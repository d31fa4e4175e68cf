import { describe, expect, it } from 'vitest';
import { assertWithinBounds, boundsFor, INPUT_BOUNDS } from '../src/bounds.ts';

function refusal(input: unknown, bounds = INPUT_BOUNDS as typeof INPUT_BOUNDS | ReturnType<typeof boundsFor>) {
  try {
    assertWithinBounds(input, bounds);
    return null;
  } catch (err) {
    return { code: (err as { code: string }).code, field: (err as { field: string }).field };
  }
}

describe('input bounds', () => {
  it('counts depth by containers: 32 passes, 33 is refused at the first too-deep value', () => {
    let ok: unknown = 1;
    for (let i = 0; i < 32; i++) ok = [ok];
    expect(refusal(ok)).toBeNull();
    expect(refusal([ok])).toEqual({ code: 'invalid_input', field: '/0'.repeat(32) });
  });

  it('survives an input nested 200,000 deep without recursion', () => {
    let deep: unknown = {};
    for (let i = 0; i < 200_000; i++) deep = { k: deep };
    expect(refusal(deep)?.code).toBe('invalid_input');
  });

  it('bounds strings and arrays, raised only where the schema declares more', () => {
    expect(refusal({ s: 'x'.repeat(65_536) })).toBeNull();
    expect(refusal({ s: 'x'.repeat(65_537) })).toEqual({ code: 'invalid_input', field: '/s' });
    expect(refusal({ a: new Array(1001).fill(0) })).toEqual({ code: 'invalid_input', field: '/a' });
    const raised = boundsFor({ type: 'object', properties: { a: { type: 'array', maxItems: 5000 }, s: { type: 'string', maxLength: 100_000 } } });
    expect(raised.stringByKey?.get('s')).toBe(100_000);
    expect(raised.arrayByKey?.get('a')).toBe(5000);
    expect(refusal({ a: new Array(5000).fill(0) }, raised)).toBeNull();
    expect(refusal({ s: 'x'.repeat(100_000) }, raised)).toBeNull();
    // The raise is for that property only.
    expect(refusal({ other: 'x'.repeat(70_000) }, raised)).toEqual({ code: 'invalid_input', field: '/other' });
    expect(refusal({ b: new Array(1001).fill(0) }, raised)).toEqual({ code: 'invalid_input', field: '/b' });
  });

  it('refuses lone surrogates in values and keys, accepts paired ones', () => {
    expect(refusal({ s: 'a\ud800b' })).toEqual({ code: 'invalid_input', field: '/s' });
    expect(refusal({ ['k\udfff']: 1 })).toEqual({ code: 'invalid_input', field: '/k\udfff' });
    expect(refusal({ s: '😀' })).toBeNull();
  });

  it('escapes pointer tokens', () => {
    expect(refusal({ 'a/b': { '~': 'x'.repeat(70_000) } })).toEqual({ code: 'invalid_input', field: '/a~1b/~0' });
  });
});
