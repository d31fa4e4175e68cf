import { TOOL_PATTERN } from '@cuadra/shared';
import { ROLE_KEY } from '../../identity/roles.ts';

/** JSON Schema pieces of roles.*. */
export const roleKey = { type: 'string', pattern: ROLE_KEY.source } as const;
export const roleName = { type: 'string', minLength: 1, maxLength: 100 } as const;
export const rolePatterns = { type: 'array', minItems: 1, maxItems: 50, uniqueItems: true, items: { type: 'string', maxLength: 200, pattern: TOOL_PATTERN.source } } as const;
