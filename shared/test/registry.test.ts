import { describe, expect, it } from 'vitest';
import { CuadraError } from '../src/errors.ts';
import { compileEveryInput, createRegistry } from '../src/registry.ts';
import { defineTool, type JsonSchema, type Risk, type Tool } from '../src/tool.ts';

/** A tool with a working handler; only the parts under test vary. */
function tool(name: string, options: { risk?: Risk; input?: JsonSchema; description?: string } = {}): Tool<any, any> {
  return defineTool({
    name,
    description: options.description ?? `Test tool ${name}, does nothing useful.`,
    risk: options.risk ?? 'read',
    input: options.input ?? { type: 'object', additionalProperties: false, properties: {} },
    handler: async () => ({}),
  });
}

const MODULES = ['invoices', 'payments'] as const;

/** The error `validate` throws, or a failure when it does not throw a CuadraError. */
function refusal(validate: () => void): CuadraError {
  try {
    validate();
  } catch (err) {
    expect(err).toBeInstanceOf(CuadraError);
    return err as CuadraError;
  }
  throw new Error('validate accepted the input');
}

describe('createRegistry refuses a bad set at start-up', () => {
  it('refuses a duplicate name', () => {
    expect(() => createRegistry('invoices', MODULES, [tool('invoices.list'), tool('invoices.list')])).toThrow(/declared twice/);
  });

  it.each([
    ['upper case', 'Invoices.list'],
    ['upper case in the action', 'invoices.List'],
    ['no dot', 'invoices'],
    ['a trailing dot', 'invoices.'],
    ['a leading dot', '.invoices'],
    ['two dots in a row', 'invoices..list'],
    ['a hyphen', 'invoices.mark-paid'],
    ['a space', 'invoices.list all'],
  ])('refuses a name with %s (%s)', (_what, name) => {
    expect(() => createRegistry('invoices', MODULES, [tool(name)])).toThrow(/must look like <module>\.<action>/);
  });

  it('refuses a tool whose module the subgraph does not own', () => {
    expect(() => createRegistry('invoices', MODULES, [tool('invoices.list'), tool('parties.list')])).toThrow(/does not own the tool module "parties"/);
  });

  it('refuses an unknown risk', () => {
    expect(() => createRegistry('invoices', MODULES, [tool('invoices.list', { risk: 'dangerous' as Risk })])).toThrow(/unknown risk "dangerous"/);
  });

  it.each([
    ['an array schema', { type: 'array', items: { type: 'string' } }],
    ['a string schema', { type: 'string' }],
    ['a schema with no type', { properties: {} }],
  ])('refuses %s as input', (_what, input) => {
    expect(() => createRegistry('invoices', MODULES, [tool('invoices.list', { input })])).toThrow(/must be an object schema/);
  });

  it('refuses a schema ajv rejects in strict mode (unknown keyword)', () => {
    const input = { type: 'object', additionalProperties: false, properties: { amount: { type: 'integer', minimumm: 0 } } };
    expect(() => createRegistry('invoices', MODULES, [tool('invoices.create', { input })])).toThrow(/unknown keyword/);
  });

  it('refuses a schema ajv rejects in strict mode (unknown format)', () => {
    const input = { type: 'object', properties: { day: { type: 'string', format: 'not-a-format' } } };
    expect(() => createRegistry('invoices', MODULES, [tool('invoices.create', { input })])).toThrow(/unknown format/);
  });

  it('refuses a tool without a real description', () => {
    expect(() => createRegistry('invoices', MODULES, [tool('invoices.list', { description: 'List' })])).toThrow(/needs a description/);
  });
});

describe('createRegistry accepts a good set', () => {
  const registry = createRegistry('invoices', MODULES, [
    tool('invoices.list'),
    tool('invoices.create', { risk: 'write' }),
    tool('invoices.send_einvoice', { risk: 'external' }),
    tool('invoices.void', { risk: 'destructive' }),
    tool('payments.record', { risk: 'write' }),
  ]);

  it('holds every tool by name, with its module', () => {
    expect(registry.subgraph).toBe('invoices');
    expect([...registry.tools.keys()].sort()).toEqual(['invoices.create', 'invoices.list', 'invoices.send_einvoice', 'invoices.void', 'payments.record']);
    expect(registry.get('payments.record')?.module).toBe('payments');
    expect(registry.get('invoices.void')?.risk).toBe('destructive');
    expect(registry.get('parties.list')).toBeUndefined();
  });

  it('validates an input that fits', () => {
    expect(() => registry.validate('invoices.list', {})).not.toThrow();
  });
});

describe('validate answers invalid_input with the JSON Pointer of the offending argument', () => {
  const input: JsonSchema = {
    type: 'object',
    additionalProperties: false,
    required: ['name', 'lines'],
    properties: {
      name: { type: 'string', minLength: 1 },
      lines: {
        type: 'array',
        items: {
          type: 'object',
          additionalProperties: false,
          required: ['quantity'],
          properties: { quantity: { type: 'integer', minimum: 1 }, note: { type: 'string' } },
        },
      },
      'a/b': { type: 'integer' },
      'c~d': { type: 'integer' },
    },
  };
  const registry = createRegistry('invoices', MODULES, [tool('invoices.create', { risk: 'write', input })]);
  const ok = { name: 'Factura', lines: [{ quantity: 2 }] };

  it('accepts an input that fits', () => {
    expect(() => registry.validate('invoices.create', ok)).not.toThrow();
    expect(() => registry.validate('invoices.create', { ...ok, 'a/b': 1, 'c~d': 2 })).not.toThrow();
  });

  it('points at a missing required property: /name', () => {
    const err = refusal(() => registry.validate('invoices.create', { lines: [] }));
    expect(err.code).toBe('invalid_input');
    expect(err.status).toBe(422);
    expect(err.field).toBe('/name');
    expect(err.toBody()).toEqual({ error: err.message, code: 'invalid_input', field: '/name' });
    expect(err.message).toMatch(/\/name/);
  });

  it('points at a nested bad value: /lines/0/quantity', () => {
    const err = refusal(() => registry.validate('invoices.create', { ...ok, lines: [{ quantity: 0 }] }));
    expect(err.code).toBe('invalid_input');
    expect(err.field).toBe('/lines/0/quantity');
  });

  it('points at the right line: /lines/1/quantity', () => {
    const err = refusal(() => registry.validate('invoices.create', { ...ok, lines: [{ quantity: 1 }, { quantity: 'two' }] }));
    expect(err.field).toBe('/lines/1/quantity');
  });

  it('points at a nested missing property: /lines/0/quantity', () => {
    const err = refusal(() => registry.validate('invoices.create', { ...ok, lines: [{ note: 'x' }] }));
    expect(err.field).toBe('/lines/0/quantity');
  });

  it('points at an additional property: /extra', () => {
    const err = refusal(() => registry.validate('invoices.create', { ...ok, extra: true }));
    expect(err.code).toBe('invalid_input');
    expect(err.field).toBe('/extra');
  });

  it('points at a nested additional property: /lines/0/price', () => {
    const err = refusal(() => registry.validate('invoices.create', { ...ok, lines: [{ quantity: 1, price: 5 }] }));
    expect(err.field).toBe('/lines/0/price');
  });

  it.each([
    ['an array', [ok]],
    ['null', null],
    ['a string', '{"name":"x"}'],
    ['a number', 42],
    ['undefined', undefined],
  ])('points at the body itself ("") for %s', (_what, body) => {
    const err = refusal(() => registry.validate('invoices.create', body));
    expect(err.code).toBe('invalid_input');
    expect(err.field).toBe('');
    expect(err.toBody().field).toBe('');
  });

  it('escapes "/" as ~1 in a pointer to a bad value', () => {
    const err = refusal(() => registry.validate('invoices.create', { ...ok, 'a/b': 'x' }));
    expect(err.field).toBe('/a~1b');
  });

  it('escapes "~" as ~0 in a pointer to a bad value', () => {
    const err = refusal(() => registry.validate('invoices.create', { ...ok, 'c~d': 'x' }));
    expect(err.field).toBe('/c~0d');
  });

  it('escapes "/" and "~" in a pointer to an additional property', () => {
    expect(refusal(() => registry.validate('invoices.create', { ...ok, 'x/y': 1 })).field).toBe('/x~1y');
    expect(refusal(() => registry.validate('invoices.create', { ...ok, 'x~y': 1 })).field).toBe('/x~0y');
    // "~1" in a key is escaped as "~01", never read back as "/".
    expect(refusal(() => registry.validate('invoices.create', { ...ok, '~1': 1 })).field).toBe('/~01');
  });

  it('escapes "/" and "~" in a pointer to a missing required property', () => {
    const schema: JsonSchema = { type: 'object', required: ['a/b', 'c~d'], properties: { 'a/b': { type: 'string' }, 'c~d': { type: 'string' } } };
    const r = createRegistry('invoices', MODULES, [tool('invoices.odd', { input: schema })]);
    expect(refusal(() => r.validate('invoices.odd', { 'c~d': 'x' })).field).toBe('/a~1b');
    expect(refusal(() => r.validate('invoices.odd', { 'a/b': 'x' })).field).toBe('/c~0d');
  });

  it('does not coerce types (a numeric string is not an integer)', () => {
    const err = refusal(() => registry.validate('invoices.create', { ...ok, lines: [{ quantity: '3' }] }));
    expect(err.field).toBe('/lines/0/quantity');
  });

  it('does not fill defaults into the input', () => {
    const schema: JsonSchema = { type: 'object', properties: { limit: { type: 'integer', default: 20 } } };
    const r = createRegistry('invoices', MODULES, [tool('invoices.paged', { input: schema })]);
    const body: Record<string, unknown> = {};
    r.validate('invoices.paged', body);
    expect(body).toEqual({});
  });
});

describe("a registry that compiles each schema at its tool's first call (a service's start)", () => {
  const input: JsonSchema = {
    type: 'object', additionalProperties: false, required: ['name', 'day'],
    properties: {
      name: { type: 'string', minLength: 1, maxLength: 20 },
      day: { type: 'string', format: 'date' },
      kind: { enum: ['a', 'b'] },
      lines: { type: 'array', maxItems: 2, items: { type: 'object', additionalProperties: false, required: ['quantity'], properties: { quantity: { type: 'integer', minimum: 1 } } } },
    },
  };
  const bad: unknown[] = [
    null, [], 'x', {}, { name: 'a' }, { name: '', day: '2026-01-01' }, { name: 'a'.repeat(21), day: '2026-01-01' },
    { name: 'a', day: '2026-02-30' }, { name: 'a', day: '3000-01-01' }, { name: 'a', day: '2026-01-01', kind: 'c' },
    { name: 'a', day: '2026-01-01', extra: 1 }, { name: 'a', day: '2026-01-01', lines: [{ quantity: 0 }] },
    { name: 'a', day: '2026-01-01', lines: [{ quantity: '1' }] }, { name: 'a', day: '2026-01-01', lines: [{}, {}, {}] },
    { name: 'a', day: '2026-01-01', lines: [{ quantity: 1, price: 2 }] }, { name: 'a', day: 20260101 },
  ];

  it('refuses a bad set at creation all the same', () => {
    expect(() => createRegistry('invoices', MODULES, [tool('invoices.list'), tool('invoices.list')], { compile: 'at-first-call' })).toThrow(/declared twice/);
    expect(() => createRegistry('invoices', MODULES, [tool('invoices.list', { input: { type: 'string' } })], { compile: 'at-first-call' })).toThrow(/must be an object schema/);
  });

  it('does not compile at creation: a schema ajv rejects throws at its first call, and compileEveryInput (the build) names it', () => {
    const rejected = { type: 'object', properties: { amount: { type: 'integer', minimumm: 0 } } };
    const lazy = createRegistry('invoices', MODULES, [tool('invoices.list'), tool('invoices.create', { input: rejected })], { compile: 'at-first-call' });
    expect(() => lazy.validate('invoices.list', {})).not.toThrow();
    expect(() => lazy.validate('invoices.create', { amount: 1 })).toThrow(/unknown keyword/);
    expect(() => compileEveryInput([tool('invoices.list'), tool('invoices.create', { input: rejected })])).toThrow(/Tool "invoices.create": ajv rejects its input schema: .*unknown keyword/);
    expect(() => compileEveryInput([tool('invoices.list'), tool('invoices.create', { input })])).not.toThrow();
  });

  it('answers every bad input with the refusal of a registry that compiled at creation', () => {
    // Two copies of the schema: each registry compiles its own (the process-wide cache is by schema object).
    const eager = createRegistry('invoices', MODULES, [tool('invoices.create', { input: structuredClone(input) })]);
    const lazy = createRegistry('invoices', MODULES, [tool('invoices.create', { input: structuredClone(input) })], { compile: 'at-first-call' });
    const fields = new Set<string>();
    for (const body of bad) {
      const a = refusal(() => eager.validate('invoices.create', body));
      const b = refusal(() => lazy.validate('invoices.create', body));
      expect(b.toBody()).toEqual(a.toBody());
      fields.add(a.field ?? '');
    }
    // The inputs reach many fields, not one refusal over and over.
    expect(fields.size).toBeGreaterThan(6);
    expect(() => lazy.validate('invoices.create', { name: 'a', day: '2026-01-01', lines: [{ quantity: 1 }] })).not.toThrow();
  });
});
