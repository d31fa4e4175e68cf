import { DATE_TIME_SCHEMA as DATE_TIME, NULLABLE_TEXT_SCHEMA as NULLABLE_TEXT, RISKS, TEXT_SCHEMA as TEXT } from '@cuadra/shared';
import { ACTOR_SCHEMA } from '../../lib/actors.ts';

// The views are made in the shared library (`LedgerEntry` and `Ledger.verify`,
// shared/src/governance/ledger.ts); their schemas are written here, beside the only tools that
// publish them, and must follow those types when they change.

/** A SHA-256 in hex, computed or checked by the ledger (a hash it walked to, or one in a verified signature). */
const HASH = { type: 'string', pattern: '^[0-9a-f]{64}$' } as const;
/**
 * A hash as stored: the ledger writes SHA-256 hex, but these are read back unchecked (ledger.list
 * rows, a checkpoint verify reports on), and a tampered store must still be reportable.
 */
const STORED_HASH = { type: 'string', description: 'SHA-256, hex, as stored.' } as const;

/** JSON Schema of a `LedgerEntry` (shared/src/governance/ledger.ts), as ledger.list answers it. */
export const LEDGER_ENTRY_SCHEMA = {
  type: 'object', additionalProperties: false,
  required: ['id', 'seq', 'at', 'workspace', 'actor', 'credential_id', 'tool', 'module', 'risk', 'input_digest', 'outcome', 'duration_ms', 'prev_hash', 'hash'],
  properties: {
    id: TEXT,
    seq: { type: 'integer', minimum: 1 },
    at: DATE_TIME,
    workspace: TEXT,
    actor: ACTOR_SCHEMA,
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
    /** The agent run the call was made for, on an agent run's calls only. */
    run_id: TEXT,
    /** On a domain event's entry only (`tool` is then the event type, e.g. invoice.overdue; the actor the owning service). */
    event: {
      type: 'object', additionalProperties: false, required: ['subject', 'key', 'data'],
      properties: {
        subject: TEXT, key: TEXT,
        data: { type: 'object', additionalProperties: { anyOf: [{ type: 'string' }, { type: 'number' }, { type: 'boolean' }, { type: 'null' }] } },
      },
    },
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
    /** The newest signed head found (signature verified), and where it was kept: beside the chain in the database, in Redis, in the verifying process. */
    anchor: {
      anyOf: [{ type: 'null' }, {
        type: 'object', additionalProperties: false, required: ['seq', 'hash', 'kept_in'],
        properties: {
          seq: { type: 'integer', minimum: 0 }, hash: HASH,
          kept_in: { type: 'array', minItems: 1, uniqueItems: true, items: { enum: ['database', 'redis', 'process'] } },
        },
      }],
    },
    /** Only when receipts were given: entries 1 to this seq were recomputed, and each receipt compared with them. */
    prefix_checked: { type: 'integer', minimum: 0 },
    /** Only when receipts were given: one per receipt, in order. */
    receipts: {
      type: 'array',
      items: { type: 'object', additionalProperties: false, required: ['receipt', 'ok'], properties: { receipt: TEXT, ok: { type: 'boolean' }, reason: TEXT } },
    },
    /** A full walk's page that stopped before the chain's end: pass it back as `cursor` (with `full: true`) to go on. */
    next_cursor: TEXT,
    /** Only when the chain breaks. */
    broken_at: {
      type: 'object', additionalProperties: false, required: ['seq', 'id', 'reason'],
      properties: { seq: { type: 'integer', minimum: 0 }, id: NULLABLE_TEXT, reason: TEXT },
    },
  },
} as const;
