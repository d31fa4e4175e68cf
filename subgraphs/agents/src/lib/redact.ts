import { REDACTED } from '@cuadra/shared';

/**
 * What a tool result may carry into a prompt, a run record or a log: fields named like secrets
 * (keys, tokens, passwords, PINs, private keys, certificates) and values shaped like credentials
 * (`nk_` API keys, bearer JWTs, PEM private keys) read "[redacted]". The pipeline already withholds
 * the secrets tools declare; this catches what an outside MCP server or a free-form record hands
 * back, before a model or a person reading the run sees it.
 */
const SECRET_NAME = /(^|[_-])(pass(word|phrase)?|secret|token|api_?key|private_?key|key|pin|credential|certificate|authorization|cookie)$/i;
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
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, SECRET_NAME.test(k) && v !== null && typeof v !== 'boolean' ? REDACTED : redactSecrets(v, depth + 1)]));
  }
  return value;
}
