import { CuadraError } from '@cuadra/shared';
import { describe, expect, it } from 'vitest';
import { errorFromBody, errorFromGraph } from '../src/refusals.ts';

// Refusals coming back from an owner or the graph are decoded in one place (refusals.ts).
describe('refusals decoded in one place', () => {
  it('turns an owner\'s refusal body back into the same error, and the same body', () => {
    for (const body of [
      { error: 'No party p_1 exists in this workspace.', code: 'not_found' },
      { error: 'Bad date.', code: 'invalid_input', field: '/due_date' },
      { error: 'Approve first.', code: 'approval_required', approval_id: 'apr_1' },
    ]) {
      const error = errorFromBody(body);
      expect(error.toBody()).toEqual(body);
      expect(error.status).toBe(new CuadraError(body.code as never, '').status);
    }
    expect(errorFromBody({ error: 'odd', code: 'teapot' })).toMatchObject({ code: 'internal' });
  });

  it('turns a GraphQL error into its contract error, masking unknown codes as the caller says', () => {
    const masked = (e: { message: string }) => new CuadraError('internal', `masked: ${e.message}`);
    expect(errorFromGraph({ message: 'No.', extensions: { code: 'policy_denied' } }, masked)).toMatchObject({ code: 'policy_denied', message: 'No.' });
    expect(errorFromGraph({ message: 'Bad.', extensions: { code: 'invalid_input', field: '/kind' } }, masked).toBody()).toEqual({ code: 'invalid_input', error: 'Bad.', field: '/kind' });
    expect(errorFromGraph({ message: 'Held.', extensions: { code: 'approval_required', extra: { approval_id: 'apr_2' } } }, masked, { recordedByOwner: true }).extra)
      .toEqual({ approval_id: 'apr_2', recordedByOwner: true });
    expect(errorFromGraph({ message: 'boom', extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }, masked)).toMatchObject({ code: 'internal', message: 'masked: boom' });
  });
});
