import { createCipheriv, createDecipheriv, createHmac, createSecretKey, hkdfSync, randomBytes, type KeyObject } from 'node:crypto';
import { inputDigest } from './governance/digest.ts';
import { mapSecrets, secretsIn, type SecretShape } from './secrets.ts';

/**
 * Sealing of secrets at rest (CONTRACT.md §9): AES-256-GCM with a server key that is not in the
 * database (`CUADRA_SEAL_KEY`, 32 random bytes in base64, the same for every service). Without a
 * key nothing is sealed: secrets are simply not kept (see {@link sealSecrets}).
 */
export interface Sealer {
  seal(plain: string, context: string): string;
  /** The plain text, or null when the box was not sealed with this key and context (tampered, other key). */
  open(box: string, context: string): string | null;
}

/** The marker that stands where a secret is withheld. */
export const REDACTED = '[redacted]';

/** A sealer from `CUADRA_SEAL_KEY`, or null when none is configured. */
export function sealerFromEnv(env: NodeJS.ProcessEnv = process.env): Sealer | null {
  const raw = env.CUADRA_SEAL_KEY;
  if (!raw) return null;
  const key = Buffer.from(raw, 'base64');
  if (key.length !== 32) throw new Error('CUADRA_SEAL_KEY must be 32 bytes in base64.');
  return createSealer(key);
}

/** A sealer over a 32-byte key. The context (e.g. the workspace and record) is authenticated, so a box cannot be moved to another record. */
export function createSealer(key: Buffer): Sealer {
  return {
    seal(plain, context) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      cipher.setAAD(Buffer.from(context, 'utf8'));
      const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return `v1.${iv.toString('base64url')}.${body.toString('base64url')}.${cipher.getAuthTag().toString('base64url')}`;
    },
    open(box, context) {
      const [v, iv, body, tag] = box.split('.');
      if (v !== 'v1' || !iv || body === undefined || !tag) return null;
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
        decipher.setAAD(Buffer.from(context, 'utf8'));
        decipher.setAuthTag(Buffer.from(tag, 'base64url'));
        return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
      } catch {
        return null;
      }
    },
  };
}

/** A sealed secret as it is stored in place of the value. */
export interface SealedValue { $sealed: string }

function isSealed(value: unknown): value is SealedValue {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && typeof (value as SealedValue).$sealed === 'string' && Object.keys(value).length === 1;
}

type Answer = { status: number; body: Record<string, unknown> };

/** A copy of `value` with every sealed box, at any depth, replaced by what `open` gives for it; `value` itself is not changed. */
function mapSealed(value: unknown, open: (box: SealedValue) => unknown): unknown {
  if (isSealed(value)) return open(value);
  if (Array.isArray(value)) {
    let changed = false;
    const out = value.map((v) => {
      const next = mapSealed(v, open);
      if (next !== v) changed = true;
      return next;
    });
    return changed ? out : value;
  }
  if (typeof value !== 'object' || value === null || value instanceof Date) return value;
  let out: Record<string, unknown> | null = null;
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    const next = mapSealed(v, open);
    if (next !== v) (out ??= { ...(value as Record<string, unknown>) })[k] = next;
  }
  return out ?? value;
}

/** Does `value` hold a sealed box anywhere? */
function holdsSealed(value: unknown): boolean {
  let found = false;
  mapSealed(value, (box) => {
    found = true;
    return box;
  });
  return found;
}

/** The secrets at the places `shape` marks, sealed for `context` (or, with no key configured, withheld as {@link REDACTED}). */
export function sealAt<T>(value: T, shape: SecretShape | null, sealer: Sealer | null, context: string): T {
  return mapSecrets(value, shape, (plain) => (sealer ? { $sealed: sealer.seal(plain, context) } : REDACTED)) as T;
}

/**
 * The answer as it may be stored: each declared secret of a 200's `output` (`x-secret`/`writeOnly`
 * in the tool's output schema, at any depth) sealed, or with no key configured withheld. The answer
 * given to the caller is never changed.
 */
export function sealSecrets(answer: Answer, shape: SecretShape | null, sealer: Sealer | null, context: string): Answer {
  if (!shape || answer.status !== 200 || typeof answer.body.output !== 'object' || answer.body.output === null) return answer;
  const output = sealAt(answer.body.output, shape, sealer, context);
  return output === answer.body.output ? answer : { ...answer, body: { ...answer.body, output } };
}

/**
 * A stored answer made readable: sealed boxes (at any depth) opened for the one principal allowed
 * to see them (`reveal`), otherwise replaced by {@link REDACTED}.
 */
export function openSecrets(answer: Answer, sealer: Sealer | null, context: string, reveal: boolean): Answer {
  if (!answer.body) return answer;
  const body = mapSealed(answer.body, (box) => (reveal && sealer ? sealer.open(box.$sealed, context) ?? REDACTED : REDACTED)) as Record<string, unknown>;
  return body === answer.body ? answer : { ...answer, body };
}

/** Does a stored answer hold a sealed secret? */
export function holdsSecret(answer: Answer | null | undefined): boolean {
  return !!answer?.body && holdsSealed(answer.body);
}

/**
 * An input as a held approval may store it: each declared secret input field (`writeOnly`, at any
 * depth: a PIN, a certificate's password, a file holding a private key) sealed for that approval, or —
 * with no key configured — withheld (the approved call then cannot run and fails saying so).
 */
export function sealInputs(input: Record<string, unknown>, shape: SecretShape | null, sealer: Sealer | null, context: string): Record<string, unknown> {
  return sealAt(input, shape, sealer, context);
}

/** A stored input opened to run it; null when a secret cannot be opened (withheld, other key, tampered). */
export function openInputs(input: Record<string, unknown>, shape: SecretShape | null, sealer: Sealer | null, context: string): Record<string, unknown> | null {
  if (!shape) return input;
  let failed = false;
  const opened = mapSealed(input, (box) => {
    const plain = sealer?.open(box.$sealed, context) ?? null;
    if (plain === null) failed = true;
    return plain;
  }) as Record<string, unknown>;
  if (failed || secretsIn(opened, shape).includes(REDACTED)) return null;
  return opened;
}

/** A stored value as people see it: sealed boxes, at any depth, shown as {@link REDACTED}. */
export function redactInputs<T>(input: T): T {
  return mapSealed(input, () => REDACTED) as T;
}

let digestKey: { raw: string; key: KeyObject } | null = null;

/** The key that digests secrets, derived (HKDF) from `CUADRA_SEAL_KEY` so a digest of one opens nothing; null without a seal key. */
function secretDigestKey(env: NodeJS.ProcessEnv = process.env): KeyObject | null {
  const raw = env.CUADRA_SEAL_KEY;
  if (!raw) return null;
  // A KeyObject, made once: createHmac would make one from a Buffer on every call.
  if (digestKey?.raw !== raw) digestKey = { raw, key: createSecretKey(Buffer.from(hkdfSync('sha256', Buffer.from(raw, 'base64'), Buffer.alloc(0), 'cuadra/secret-digest/v1', 32))) };
  return digestKey.key;
}

/**
 * The digest of a tool's input (what idempotency and approvals compare, and what the ledger keeps
 * instead of the input). A plain SHA-256 of an input holding a secret would let anyone who reads
 * the ledger and sees the rest of the input (a held call's, in the inbox) try every PIN until one
 * matches; so each declared secret is first replaced by its HMAC under a key derived from the seal
 * key (by a fixed marker without one: such tools refuse to run then anyway). Equal inputs still
 * give equal digests, across every service sharing the key.
 */
export function toolInputDigest(input: unknown, shape: SecretShape | null, workspace: string): string {
  if (!shape) return inputDigest(input);
  const key = secretDigestKey();
  return inputDigest(mapSecrets(input, shape, (plain) => ({ $secret: key ? createHmac('sha256', key).update(`${workspace}\n${plain}`).digest('hex') : REDACTED })));
}
