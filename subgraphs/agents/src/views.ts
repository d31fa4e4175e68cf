import { DATE_TIME_SCHEMA as DATE_TIME, ERROR_STATUS, NULLABLE_TEXT_SCHEMA as NULLABLE_TEXT, RISKS, TEXT_SCHEMA as TEXT } from '@cuadra/shared';

// JSON Schemas of the governance views the agents subgraph's tools answer. Those views are made
// in the shared library (shared/src/governance: `Policy` of policies.ts, `approvalView` of
// approvals.ts, `LedgerEntry` and `Ledger.verify` of ledger.ts); their schemas are written here,
// beside the only tools that publish them, and must follow those types when they change.

/** A SHA-256 in hex, computed or checked by the ledger (a hash it walked to, or one in a verified signature). */
const HASH = { type: 'string', pattern: '^[0-9a-f]{64}$' } as const;
/**
 * A hash as stored: the ledger writes SHA-256 hex, but these are read back unchecked (ledger.list
 * rows, a checkpoint verify reports on), and a tampered store must still be reportable.
 */
const STORED_HASH = { type: 'string', description: 'SHA-256, hex, as stored.' } as const;
/** `Principal['actor']['type']`. */
const ACTOR_TYPES = ['api_key', 'member', 'agent', 'oauth_app', 'service'] as const;
const ACTOR = {
  type: 'object', additionalProperties: false, required: ['type', 'id'],
  properties: { type: { enum: [...ACTOR_TYPES] }, id: TEXT },
} as const;

/** JSON Schema of a `Policy` (shared/src/governance/policies.ts), as policies.* answer it. */
export const POLICY_SCHEMA = {
  type: 'object', additionalProperties: false,
  // `conditions` is optional in the stored shape; policies.create always writes it (`{}` when none).
  required: ['id', 'workspace', 'name', 'priority', 'match', 'effect', 'created_at', 'updated_at'],
  properties: {
    id: TEXT,
    workspace: TEXT,
    name: TEXT,
    priority: { type: 'integer' },
    match: {
      type: 'object', additionalProperties: false,
      properties: {
        tools: { type: 'array', items: TEXT },
        risk: { type: 'array', items: { enum: [...RISKS] } },
        actors: { type: 'array', items: { enum: [...ACTOR_TYPES] } },
        roles: { type: 'array', items: TEXT },
      },
    },
    conditions: {
      type: 'object', additionalProperties: false,
      properties: { amount_over: { type: 'integer', minimum: 0 } },
    },
    effect: { enum: ['allow', 'hold', 'ask', 'deny'] },
    created_at: DATE_TIME,
    updated_at: DATE_TIME,
  },
} as const;

/** The body of a refusal (`refusalBody`, shared/src/errors.ts). */
const REFUSAL_BODY = {
  type: 'object', additionalProperties: false, required: ['error', 'code'],
  properties: { error: TEXT, code: { enum: Object.keys(ERROR_STATUS) }, field: TEXT, approval_id: TEXT },
} as const;

/** JSON Schema of {@link approvalView} (shared/src/governance/approvals.ts): what approvals.* answer. */
export const APPROVAL_VIEW_SCHEMA = {
  type: 'object', additionalProperties: false,
  required: ['id', 'status', 'mode', 'tool', 'input', 'requested_by', 'requested_at', 'decided_by', 'decided_at', 'reason', 'result', 'expires_at'],
  properties: {
    id: TEXT,
    status: { enum: ['pending', 'approved', 'rejected', 'expired', 'executing', 'executed', 'failed'] },
    mode: { enum: ['hold', 'ask'] },
    tool: TEXT,
    /** The held call's input: whatever that tool takes. */
    input: { type: 'object' },
    requested_by: {
      type: 'object', additionalProperties: false, required: ['type', 'id', 'credential_id', 'role'],
      properties: { type: { enum: [...ACTOR_TYPES] }, id: TEXT, credential_id: TEXT, role: TEXT, person: TEXT },
    },
    requested_at: DATE_TIME,
    decided_by: { anyOf: [{ type: 'null' }, ACTOR] },
    decided_at: { anyOf: [DATE_TIME, { type: 'null' }] },
    reason: NULLABLE_TEXT,
    /**
     * The answer of the call once it ran: 200 with `{tool, output}` (a secret in the output reads
     * "[redacted]" unless shown once to its requester), or a refusal's status and body.
     */
    result: {
      anyOf: [{ type: 'null' }, {
        type: 'object', additionalProperties: false, required: ['status', 'body'],
        properties: {
          status: { type: 'integer' },
          body: {
            anyOf: [
              { type: 'object', additionalProperties: false, required: ['tool', 'output'], properties: { tool: TEXT, output: { type: 'object' } } },
              REFUSAL_BODY,
            ],
          },
        },
      }],
    },
    expires_at: DATE_TIME,
  },
} as const;

/** JSON Schema of a `LedgerEntry` (shared/src/governance/ledger.ts), as ledger.list answers it. */
export const LEDGER_ENTRY_SCHEMA = {
  type: 'object', additionalProperties: false,
  required: ['id', 'seq', 'at', 'workspace', 'actor', 'credential_id', 'tool', 'module', 'risk', 'input_digest', 'outcome', 'duration_ms', 'prev_hash', 'hash'],
  properties: {
    id: TEXT,
    seq: { type: 'integer', minimum: 1 },
    at: DATE_TIME,
    workspace: TEXT,
    actor: ACTOR,
    credential_id: TEXT,
    tool: TEXT,
    module: TEXT,
    risk: { enum: [...RISKS, null] },
    input_digest: NULLABLE_TEXT,
    /** `ok`, `pending_approval`, a refusal code, or `interrupted`. */
    outcome: TEXT,
    approval_id: TEXT,
    idempotency_key: TEXT,
    /** Present (true) only when the answer replayed an earlier one. */
    replayed: { const: true },
    duration_ms: { type: 'integer' },
    prev_hash: STORED_HASH,
    hash: STORED_HASH,
  },
} as const;

/** A position of the chain and its hash: `hash` as {@link HASH} for the signed head, {@link STORED_HASH} for a stored checkpoint. */
function chainPoint(hash: typeof HASH | typeof STORED_HASH) {
  return {
    type: 'object', additionalProperties: false, required: ['seq', 'hash'],
    properties: { seq: { type: 'integer', minimum: 0 }, hash },
  } as const;
}

/** JSON Schema of `Ledger.verify`'s result (`LedgerVerification`, shared/src/governance/ledger.ts): what ledger.verify answers. */
export const LEDGER_VERIFICATION_SCHEMA = {
  type: 'object', additionalProperties: false,
  required: ['ok', 'entries', 'head', 'mode', 'anchored', 'checked_from', 'checkpoint', 'anchor'],
  properties: {
    ok: { type: 'boolean' },
    entries: { type: 'integer', minimum: 0 },
    head: HASH,
    mode: { enum: ['routine', 'full'] },
    anchored: { type: 'boolean' },
    /** Only when a ledger key is configured. */
    public_key: TEXT,
    checked_from: { type: 'integer', minimum: 0 },
    /** The newest stored checkpoint, as stored (a forged one is reported in broken_at). */
    checkpoint: { anyOf: [{ type: 'null' }, chainPoint(STORED_HASH)] },
    /** The signed head kept outside the database, once its signature verified. */
    anchor: { anyOf: [{ type: 'null' }, chainPoint(HASH)] },
    /** Only when receipts were given: one per receipt, in order. */
    receipts: {
      type: 'array',
      items: { type: 'object', additionalProperties: false, required: ['receipt', 'ok'], properties: { receipt: TEXT, ok: { type: 'boolean' }, reason: TEXT } },
    },
    /** Only when the chain breaks. */
    broken_at: {
      type: 'object', additionalProperties: false, required: ['seq', 'id', 'reason'],
      properties: { seq: { type: 'integer', minimum: 0 }, id: NULLABLE_TEXT, reason: TEXT },
    },
  },
} as const;
