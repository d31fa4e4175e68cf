import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

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
  return typeof value === 'object' && value !== null && typeof (value as SealedValue).$sealed === 'string';
}

type Answer = { status: number; body: Record<string, unknown> };

/**
 * The answer as it may be stored: each declared secret field of a 200's `output` sealed (or, with
 * no key configured, withheld). The answer given to the caller is never changed.
 */
export function sealSecrets(answer: Answer, secrets: readonly string[] | undefined, sealer: Sealer | null, context: string): Answer {
  if (!secrets?.length || answer.status !== 200) return answer;
  const output = answer.body.output as Record<string, unknown> | undefined;
  if (!output || typeof output !== 'object') return answer;
  const kept: Record<string, unknown> = { ...output };
  for (const field of secrets) {
    if (typeof kept[field] !== 'string') continue;
    kept[field] = sealer ? { $sealed: sealer.seal(kept[field] as string, context) } : REDACTED;
  }
  return { ...answer, body: { ...answer.body, output: kept } };
}

/**
 * A stored answer made readable: sealed fields opened for the one principal allowed to see them
 * (`reveal`), otherwise replaced by {@link REDACTED}.
 */
export function openSecrets(answer: Answer, sealer: Sealer | null, context: string, reveal: boolean): Answer {
  const output = answer.body?.output as Record<string, unknown> | undefined;
  if (!output || typeof output !== 'object' || !Object.values(output).some(isSealed)) return answer;
  const shown: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(output)) {
    shown[k] = isSealed(v) ? (reveal && sealer ? sealer.open(v.$sealed, context) ?? REDACTED : REDACTED) : v;
  }
  return { ...answer, body: { ...answer.body, output: shown } };
}

/** Does a stored answer hold a sealed secret? */
export function holdsSecret(answer: Answer | null | undefined): boolean {
  const output = answer?.body?.output as Record<string, unknown> | undefined;
  return !!output && typeof output === 'object' && Object.values(output).some(isSealed);
}

/**
 * An input as a held approval may store it: each declared secret input field (a certificate's
 * password, a file holding a private key) sealed for that approval, or — with no key configured —
 * withheld (the approved call then cannot run and fails saying so). The digest is of the input given.
 */
export function sealInputs(input: Record<string, unknown>, fields: readonly string[] | undefined, sealer: Sealer | null, context: string): Record<string, unknown> {
  if (!fields?.length) return input;
  const kept: Record<string, unknown> = { ...input };
  for (const field of fields) {
    if (typeof kept[field] !== 'string') continue;
    kept[field] = sealer ? { $sealed: sealer.seal(kept[field] as string, context) } : REDACTED;
  }
  return kept;
}

/** A stored input opened to run it; null when a secret cannot be opened (withheld, other key, tampered). */
export function openInputs(input: Record<string, unknown>, fields: readonly string[] | undefined, sealer: Sealer | null, context: string): Record<string, unknown> | null {
  if (!fields?.length) return input;
  const opened: Record<string, unknown> = { ...input };
  for (const field of fields) {
    const value = opened[field];
    if (value === REDACTED) return null;
    if (!isSealed(value)) continue;
    const plain = sealer?.open(value.$sealed, context) ?? null;
    if (plain === null) return null;
    opened[field] = plain;
  }
  return opened;
}

/** A stored input as people see it: sealed fields shown as {@link REDACTED}. */
export function redactInputs(input: Record<string, unknown>): Record<string, unknown> {
  if (!Object.values(input).some(isSealed)) return input;
  return Object.fromEntries(Object.entries(input).map(([k, v]) => [k, isSealed(v) ? REDACTED : v]));
}
