import { namedLikeSecret, nameWords, NOT_SECRET_LAST_WORDS, REDACTED } from '@cuadra/shared';

/**
 * What a tool result may carry into a prompt, a run record or a log: fields named like secrets
 * (the build's rule, `namedLikeSecret`: keys, tokens, passwords, PINs, certificates… but not a
 * lookup key such as `key`, `idempotency_key` or `document_key`, nor a fact about a secret such as
 * `api_key_hint`), an HTTP credential's header (`authorization`, `cookie`), and values shaped like
 * credentials (`nk_` API keys, bearer JWTs, PEM private keys) read "[redacted]". The pipeline
 * already withholds the secrets tools declare; this catches what an outside MCP server or a
 * free-form record hands back, before a model or a person reading the run sees it.
 */
const HEADER_WORDS = new Set(['authorization', 'cookie']);

/** Is a field of this name a secret in data from outside? */
function secretName(name: string): boolean {
  if (namedLikeSecret(name)) return true;
  const words = nameWords(name);
  return words.some((w) => HEADER_WORDS.has(w)) && !NOT_SECRET_LAST_WORDS.has(words[words.length - 1]);
}

const SECRET_VALUE = [
  /\bnk_[0-9A-Za-z]{20,}/,
  /\beyJ[0-9A-Za-z_-]{8,}\.[0-9A-Za-z_-]{8,}\.[0-9A-Za-z_-]{8,}/,
  /-----BEGIN [A-Z ]*PRIVATE KEY-----/,
  /\b(sk|pk|rk)-[0-9A-Za-z_-]{16,}/,
];

/** True when a string value looks like a credential. */
export function looksSecret(value: string): boolean {
  return SECRET_VALUE.some((re) => re.test(value));
}

/** A copy of `value` with secret-named fields and credential-shaped strings redacted (depth-bounded). */
export function redactSecrets(value: unknown, depth = 0): unknown {
  if (depth > 40) return REDACTED;
  if (typeof value === 'string') return looksSecret(value) ? REDACTED : value;
  if (Array.isArray(value)) return value.map((v) => redactSecrets(v, depth + 1));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, secretName(k) && v !== null && typeof v !== 'boolean' ? REDACTED : redactSecrets(v, depth + 1)]));
  }
  return value;
}
