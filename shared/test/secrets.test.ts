import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createRegistry } from '../src/registry.ts';
import { createSealer, holdsSecret, openInputs, openSecrets, REDACTED, redactInputs, sealInputs, sealSecrets, toolInputDigest } from '../src/seal.ts';
import { assertSecretFieldsDeclared, mapSecrets, namedLikeSecret, secretShape, secretsIn, undeclaredSecretFields } from '../src/secrets.ts';
import { defineTool } from '../src/tool.ts';

// Issue 31, finding 1: secrets are declared in the schema, at any depth, and the build refuses a
// field named like a secret that is not declared one.

/** A schema with secrets at several depths and through the usual combinators. */
const SCHEMA = {
  type: 'object', additionalProperties: false,
  properties: {
    name: { type: 'string' },
    pin: { type: 'string', writeOnly: true },
    bank: {
      type: 'object',
      properties: { account: { type: 'string' }, credentials: { type: 'object', properties: { password: { type: 'string', writeOnly: true }, user: { type: 'string' } } } },
    },
    certificates: { type: 'array', items: { type: 'object', properties: { p12_base64: { type: 'string', writeOnly: true }, label: { type: 'string' } } } },
    mode: {
      anyOf: [
        { type: 'object', properties: { kind: { const: 'token' }, token: { type: 'string', writeOnly: true } } },
        { type: 'object', properties: { kind: { const: 'plain' } } },
      ],
    },
    tree: { $ref: '#/$defs/node' },
    extra: { type: 'object', additionalProperties: { type: 'string', 'x-secret': true } },
  },
  $defs: { node: { type: 'object', properties: { secret: { type: 'string', writeOnly: true }, children: { type: 'array', items: { $ref: '#/$defs/node' } } } } },
} as const;

const INPUT = {
  name: 'Visible', pin: '1234',
  bank: { account: '0011', credentials: { password: 'hunter2hunter2', user: 'ana' } },
  certificates: [{ p12_base64: 'MIIB', label: 'a' }, { label: 'b' }, { p12_base64: 'MIIC', label: 'c' }],
  mode: { kind: 'token', token: 'tok_abc' },
  tree: { secret: 's0', children: [{ secret: 's1', children: [{ secret: 's2' }] }] },
  extra: { a: 'x1', b: 'x2' },
};
const SECRETS = ['1234', 'hunter2hunter2', 'MIIB', 'MIIC', 'tok_abc', 's0', 's1', 's2', 'x1', 'x2'];

describe('where a schema puts its secrets', () => {
  it('finds them at any depth: nested objects, array items, anyOf branches, recursive $ref, additionalProperties', () => {
    const shape = secretShape(SCHEMA);
    expect(shape).not.toBeNull();
    expect(secretsIn(INPUT, shape).sort()).toEqual([...SECRETS].sort());
  });

  it('leaves everything else as it is, and the input itself unchanged', () => {
    const before = JSON.stringify(INPUT);
    const replaced = mapSecrets(INPUT, secretShape(SCHEMA), () => '•') as typeof INPUT;
    expect(JSON.stringify(INPUT)).toBe(before);
    expect(replaced).toMatchObject({ name: 'Visible', pin: '•', bank: { account: '0011', credentials: { password: '•', user: 'ana' } }, certificates: [{ p12_base64: '•', label: 'a' }, { label: 'b' }, { p12_base64: '•', label: 'c' }] });
    expect(replaced.tree.children[0].children[0].secret).toBe('•');
    // Untouched parts are the same objects (nothing copied needlessly).
    expect(replaced.certificates[1]).toBe(INPUT.certificates[1]);
  });

  it('is null for a schema that declares no secret (most tools: nothing to walk)', () => {
    expect(secretShape({ type: 'object', properties: { name: { type: 'string' }, key: { type: 'string' } } })).toBeNull();
  });
});

describe('sealed at rest, redacted for people, opened only to run', () => {
  const sealer = createSealer(randomBytes(32));
  const shape = secretShape(SCHEMA);

  it('seals every secret for its context; the stored form holds none of them; people see [redacted] at each place', () => {
    const stored = sealInputs(INPUT, shape, sealer, 'apr:apr_1');
    const text = JSON.stringify(stored);
    for (const secret of SECRETS) expect(text).not.toContain(`"${secret}"`);
    const shown = redactInputs(stored) as typeof INPUT;
    expect(shown.bank.credentials.password).toBe(REDACTED);
    expect(shown.tree.children[0].secret).toBe(REDACTED);
    expect(shown.extra).toEqual({ a: REDACTED, b: REDACTED });
    expect(shown.name).toBe('Visible');
    expect(openInputs(stored, shape, sealer, 'apr:apr_1')).toEqual(INPUT);
    // Bound to its context: another approval's box does not open here; without a key nothing opens.
    expect(openInputs(stored, shape, sealer, 'apr:apr_2')).toBeNull();
    expect(openInputs(stored, shape, null, 'apr:apr_1')).toBeNull();
  });

  it('without a key, secrets are withheld rather than kept, and the input cannot be opened to run', () => {
    const stored = sealInputs(INPUT, shape, null, 'apr:apr_3');
    expect(secretsIn(stored, shape)).toEqual(Array(SECRETS.length).fill(REDACTED));
    expect(openInputs(stored, shape, sealer, 'apr:apr_3')).toBeNull();
  });

  it('seals an output\'s secrets at any depth (x-secret), opened for the requester only', () => {
    const output = { type: 'object', properties: { keys: { type: 'array', items: { type: 'object', properties: { id: { type: 'string' }, value: { type: 'string', 'x-secret': true } } } } } };
    const answer = { status: 200, body: { tool: 't.x', output: { keys: [{ id: 'k1', value: 'nk_one' }, { id: 'k2', value: 'nk_two' }] } } };
    const stored = sealSecrets(answer, secretShape(output), sealer, 'idem:1');
    expect(JSON.stringify(stored)).not.toMatch(/nk_one|nk_two/);
    expect(holdsSecret(stored)).toBe(true);
    expect(openSecrets(stored, sealer, 'idem:1', false).body).toEqual({ tool: 't.x', output: { keys: [{ id: 'k1', value: REDACTED }, { id: 'k2', value: REDACTED }] } });
    expect(openSecrets(stored, sealer, 'idem:1', true).body).toEqual(answer.body);
    // The answer given to the caller is never changed.
    expect(answer.body.output.keys[0].value).toBe('nk_one');
  });
});

describe('the input digest', () => {
  it('keeps no plain hash of a secret: a guessed PIN hashed with the rest of the input does not match it', async () => {
    const { createHash } = await import('node:crypto');
    const previous = process.env.CUADRA_SEAL_KEY;
    process.env.CUADRA_SEAL_KEY = randomBytes(32).toString('base64');
    try {
      const schema = { type: 'object', properties: { nit: { type: 'string' }, software_pin: { type: 'string', writeOnly: true } } };
      const shape = secretShape(schema);
      const digest = toolInputDigest({ nit: '900', software_pin: '12345' }, shape, 'ws_1');
      const plain = createHash('sha256').update('{"nit":"900","software_pin":"12345"}').digest('hex');
      expect(digest).not.toBe(plain);
      // Still a function of the input: equal inputs agree, a different PIN differs, another workspace differs.
      expect(toolInputDigest({ software_pin: '12345', nit: '900' }, shape, 'ws_1')).toBe(digest);
      expect(toolInputDigest({ nit: '900', software_pin: '12346' }, shape, 'ws_1')).not.toBe(digest);
      expect(toolInputDigest({ nit: '900', software_pin: '12345' }, shape, 'ws_2')).not.toBe(digest);
      // A tool without secrets keeps the plain digest (nothing to hide, and old entries still compare).
      expect(toolInputDigest({ nit: '900' }, null, 'ws_1')).toBe(createHash('sha256').update('{"nit":"900"}').digest('hex'));
    } finally {
      if (previous === undefined) delete process.env.CUADRA_SEAL_KEY;
      else process.env.CUADRA_SEAL_KEY = previous;
    }
  });
});

describe('the build\'s rule: a field named like a secret is declared one', () => {
  it.each([
    'pin', 'software_pin', 'password', 'p12_base64', 'technical_key', 'api_key', 'apiKey', 'private_key', 'client_secret', 'access_token',
    'refresh_token', 'smtp_password', 'certificate', 'card_cvv', 'otp',
  ])('%s is named like a secret', (name) => {
    expect(namedLikeSecret(name)).toBe(true);
  });

  it.each([
    'key', 'idempotency_key', 'dimension_key', 'document_key', 'public_key', 'api_key_id', 'credential_id', 'token_type', 'key_prefix',
    'software_pin_set', 'certificate_expires_at', 'name', 'keyword', 'monkey', 'pinned', 'spinner', 'tokenizer',
  ])('%s is not', (name) => {
    expect(namedLikeSecret(name)).toBe(false);
  });

  it('names every undeclared one, at any depth, in input and output; a declared one, a boolean or an object passes', () => {
    const tool = {
      name: 'bank.connect',
      input_schema: {
        type: 'object',
        properties: {
          api_token: { type: 'string' }, pin: { type: 'string', writeOnly: true }, pin_set: { type: 'boolean' },
          accounts: { type: 'array', items: { type: 'object', properties: { password: { type: ['string', 'null'] }, secret: { enum: ['a', 'b'] } } } },
          certificate: { type: 'object', properties: { subject: { type: 'string' } } },
        },
      },
      output_schema: { type: 'object', properties: { client_secret: { type: 'string' }, key: { type: 'string' } } },
    };
    expect(undeclaredSecretFields(tool.input_schema)).toEqual(['/api_token', '/accounts/*/password']);
    expect(() => assertSecretFieldsDeclared([tool])).toThrow(/bank\.connect input \/api_token[\s\S]*bank\.connect input \/accounts\/\*\/password[\s\S]*bank\.connect output \/client_secret/);
  });

  it('the keywords are accepted by the registry\'s ajv (strict mode): writeOnly and x-secret validate nothing', () => {
    const tool = defineTool({
      name: 'vault.put', description: 'Keeps a secret for a test.', risk: 'write',
      input: { type: 'object', additionalProperties: false, required: ['pin'], properties: { pin: { type: 'string', writeOnly: true }, note: { type: 'string', 'x-secret': true } } },
      handler: async () => ({}),
    });
    const registry = createRegistry('vault', ['vault'], [tool]);
    expect(() => registry.validate('vault.put', { pin: '1', note: 'n' })).not.toThrow();
    expect(() => registry.validate('vault.put', {})).toThrow(/pin/);
  });
});
