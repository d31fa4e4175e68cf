import { DATE_TIME_SCHEMA as DATE_TIME, ERROR_STATUS, NULLABLE_TEXT_SCHEMA as NULLABLE_TEXT, TEXT_SCHEMA as TEXT } from '@cuadra/shared';
import { ACTOR_SCHEMA, ACTOR_TYPES } from '../../lib/actors.ts';

// The view is made in the shared library (`approvalView`, shared/src/governance/approvals.ts); its
// schema is written here, beside the only tools that publish it, and must follow it when it changes.

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
    status: { enum: ['pending', 'approved', 'rejected', 'expired', 'executing', 'executed', 'failed', 'withdrawn'] },
    mode: { enum: ['hold', 'ask'] },
    tool: TEXT,
    /** The held call's input: whatever that tool takes. */
    input: { type: 'object' },
    requested_by: {
      type: 'object', additionalProperties: false, required: ['type', 'id', 'credential_id', 'role'],
      properties: { type: { enum: [...ACTOR_TYPES] }, id: TEXT, credential_id: TEXT, role: TEXT, person: TEXT },
    },
    requested_at: DATE_TIME,
    /** `person`: the signed-in person behind the app or page that decided. */
    decided_by: { anyOf: [{ type: 'null' }, { ...ACTOR_SCHEMA, properties: { ...ACTOR_SCHEMA.properties, person: TEXT } }] },
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
    /** The autonomy policy that held the call (absent on approvals made before it was recorded). */
    policy: { type: 'object', additionalProperties: false, required: ['id', 'name'], properties: { id: TEXT, name: TEXT } },
    /** What the call would do, made when it was held (a campaign's recipients, exclusions, first window, sample). */
    preview: { type: 'object', description: 'What the call would do, computed when it was held (the tool\'s preview), for the person deciding.' },
  },
} as const;
