import { describe, expect, it } from 'vitest';
import { checkOutput } from '../src/testing.ts';
import { pageOutput, recordOutput } from '../src/index.ts';

describe('declared output schemas', () => {
  it('hold real outputs to the declared shape, and say what is off', () => {
    const row = { type: 'object', additionalProperties: false, required: ['id'], properties: { id: { type: 'string' } } };
    expect(() => checkOutput('x.get', recordOutput('x', row), { x: { id: 'x_1' } })).not.toThrow();
    expect(() => checkOutput('x.get2', recordOutput('x', row), { x: { id: 1 } })).toThrow(/output\/x\/id must be string/);
    expect(() => checkOutput('x.get3', recordOutput('x', row), { x: { id: 'x_1', secret: 'y' } })).toThrow(/must NOT have additional properties/);
    expect(() => checkOutput('x.list', pageOutput(row), { rows: [{ id: 'a' }], total: 1, next_cursor: 'c' })).not.toThrow();
    expect(() => checkOutput('x.list2', pageOutput(row), { rows: [{ id: 'a' }], total: -1 })).toThrow(/total must be >= 0/);
    expect(() => checkOutput('y.none', undefined, { anything: true })).not.toThrow();
  });
});
