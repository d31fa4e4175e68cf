import { describe, expect, it } from 'vitest';
import {
  CuadraError, ERROR_STATUS, INTERNAL_MESSAGE, isCuadraError, isErrorCode, refusalBody, statusOf, storeUnreachable, toCuadraError, type ErrorCode,
} from '../src/errors.ts';

/** The table of CONTRACT.md §3 and the specification §7, written out independently of the code. */
const CONTRACT_TABLE: [ErrorCode, number][] = [
  ['unauthenticated', 401],
  ['insufficient_scope', 403],
  ['approval_required', 403],
  ['policy_denied', 403],
  ['unknown_tool', 404],
  ['not_found', 404],
  // CONTRACT.md §9 (2026-11-22)
  ['method_not_allowed', 405],
  ['idempotency_conflict', 409],
  ['conflict', 409],
  ['body_too_large', 413],
  // Issue 31 (CHANGELOG): a request head past the server's limit, answered with the JSON refusal body.
  ['uri_too_long', 414],
  ['dry_run_unsupported', 400],
  ['invalid_input', 422],
  ['rate_limited', 429],
  ['headers_too_large', 431],
  ['internal', 500],
  ['outcome_unknown', 502],
  ['unavailable', 503],
];

describe('error codes and statuses', () => {
  it.each(CONTRACT_TABLE)('%s is %i', (code, status) => {
    expect(ERROR_STATUS[code]).toBe(status);
    expect(statusOf(code)).toBe(status);
    expect(new CuadraError(code, 'x').status).toBe(status);
  });

  it('the table holds exactly the contract codes, no more', () => {
    expect(Object.keys(ERROR_STATUS).sort()).toEqual(CONTRACT_TABLE.map(([c]) => c).sort());
  });

  it('an unknown code is answered as 500, and is not a contract code', () => {
    expect(statusOf('teapot')).toBe(500);
    expect(statusOf('toString')).toBe(500);
    expect(isErrorCode('teapot')).toBe(false);
    expect(isErrorCode('constructor')).toBe(false);
    expect(isErrorCode('conflict')).toBe(true);
  });
});

describe('toBody', () => {
  it('includes field for invalid_input', () => {
    const e = new CuadraError('invalid_input', 'The argument /lines/0/quantity must be >= 1.', { field: '/lines/0/quantity' });
    expect(e.toBody()).toEqual({ error: 'The argument /lines/0/quantity must be >= 1.', code: 'invalid_input', field: '/lines/0/quantity' });
  });

  it('gives invalid_input field "" when none was set (the body itself)', () => {
    expect(new CuadraError('invalid_input', 'Not an object.').toBody()).toEqual({ error: 'Not an object.', code: 'invalid_input', field: '' });
  });

  it.each(CONTRACT_TABLE.filter(([c]) => c !== 'invalid_input'))('leaves field out for %s, even when one was set', (code) => {
    const body = new CuadraError(code, 'No.', { field: '/name' }).toBody();
    expect(body).toEqual({ error: 'No.', code });
    expect('field' in body).toBe(false);
  });

  it('adds approval_id for approval_required', () => {
    const body = new CuadraError('approval_required', 'Ask the owner.', { extra: { approval_id: 'apr_1' } }).toBody();
    expect(body).toEqual({ error: 'Ask the owner.', code: 'approval_required', approval_id: 'apr_1' });
  });

  it('never copies other extra facts (headers, scope) into the body', () => {
    const body = new CuadraError('rate_limited', 'Slow down.', { extra: { headers: { 'Retry-After': '3' }, scope: 'tools' } }).toBody();
    expect(body).toEqual({ error: 'Slow down.', code: 'rate_limited' });
  });

  it('refusalBody and toBody agree', () => {
    expect(refusalBody('invalid_input', 'Bad.', '/x')).toEqual(new CuadraError('invalid_input', 'Bad.', { field: '/x' }).toBody());
  });

  it('serialises to exactly error, code (and field)', () => {
    const json = JSON.parse(JSON.stringify(new CuadraError('not_found', 'No invoice inv_1.').toBody()));
    expect(Object.keys(json).sort()).toEqual(['code', 'error']);
  });
});

describe('toCuadraError', () => {
  it('passes a contract error through unchanged', () => {
    const e = new CuadraError('conflict', 'The invoice is already posted.');
    expect(toCuadraError(e)).toBe(e);
  });

  it('recognises a contract error from another copy of the package by name and code', () => {
    class OtherCopy extends Error {
      code = 'not_found';
      override name = 'CuadraError';
    }
    const e = new OtherCopy('gone');
    expect(isCuadraError(e)).toBe(true);
    expect(toCuadraError(e)).toBe(e);
  });

  it('masks an unknown Error as internal, with no stack and no original message in the body', () => {
    const original = new Error('connect ECONNREFUSED 10.0.0.7:27017 secret-password');
    const e = toCuadraError(original);
    expect(e.code).toBe('internal');
    expect(e.status).toBe(500);
    expect(e.message).toBe(INTERNAL_MESSAGE);
    expect(e.cause).toBe(original); // kept for the log, never for the caller
    const body = e.toBody();
    expect(body).toEqual({ error: INTERNAL_MESSAGE, code: 'internal' });
    const text = JSON.stringify(body);
    expect(text).not.toContain('ECONNREFUSED');
    expect(text).not.toContain('secret-password');
    expect(text).not.toContain('at ');
    expect(text).not.toContain(original.stack!.split('\n')[1].trim());
  });

  it.each([
    ['a string', 'secret-password'],
    ['null', null],
    ['undefined', undefined],
    ['a plain object', { message: 'secret-password', code: 'E_SECRET' }],
    ['a TypeError', new TypeError('secret-password is not a function')],
    ['an error named CuadraError with an unknown code', Object.assign(new Error('secret-password'), { name: 'CuadraError', code: 'teapot' })],
    ['an error named CuadraError with no code', Object.assign(new Error('secret-password'), { name: 'CuadraError' })],
  ])('masks %s as internal', (_what, thrown) => {
    const e = toCuadraError(thrown);
    expect(e).toBeInstanceOf(CuadraError);
    expect(e.code).toBe('internal');
    expect(e.toBody()).toEqual({ error: INTERNAL_MESSAGE, code: 'internal' });
  });

  it('masks an error named CuadraError whose code is an Object.prototype member', () => {
    const fake = Object.assign(new Error('secret-password'), { name: 'CuadraError', code: 'constructor' });
    expect(isCuadraError(fake)).toBe(false);
    expect(toCuadraError(fake).code).toBe('internal');
  });
});

describe('a store that cannot be reached (issue 31, finding 7)', () => {
  it('is unavailable also when a bulk write (insertMany, bulkWrite) wraps the network error it met', async () => {
    const { MongoBulkWriteError, MongoNetworkError } = (await import('mongoose')).mongo;
    const network = new MongoNetworkError('read ECONNRESET');
    const bulk = new MongoBulkWriteError(network as never, {} as never);
    expect(bulk.name).toBe('MongoBulkWriteError');
    expect(toCuadraError(bulk).code).toBe('unavailable');
    expect(toCuadraError(new Error('wrapped', { cause: network })).code).toBe('unavailable');
    // A bulk write refused for what was written (a duplicate key) is not an outage.
    const duplicate = new MongoBulkWriteError({ message: 'E11000 duplicate key', code: 11000 } as never, {} as never);
    expect(toCuadraError(duplicate).code).toBe('internal');
  });

  it('a socket the database server closed under a write is the store unreachable (503), not internal', () => {
    // What Node throws from Socket.writeAfterFIN when the driver writes on a socket the killed server ended.
    const epipe = Object.assign(new Error('This socket has been ended by the other party'), { code: 'EPIPE' });
    expect(storeUnreachable(epipe)).toBe(true);
    expect(toCuadraError(epipe).code).toBe('unavailable');
    expect(storeUnreachable(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }))).toBe(true);
    expect(storeUnreachable(Object.assign(new Error('bad'), { code: 'ERR_INVALID_ARG_TYPE' }))).toBe(false);
    expect(storeUnreachable(new Error('This socket has been ended by the other party'))).toBe(false);
  });

  it('the known-down refusal survives the driver wrapping it in a bulk-write error, and is unavailable', async () => {
    const { DatabaseKnownDownError } = await import('../src/db.ts');
    const { default: mongoose } = await import('mongoose');
    const { MongoBulkWriteError } = mongoose.mongo;
    const down = new DatabaseKnownDownError('not waiting for it');
    // What the driver does with an insertMany's error (bulk/common.js): copy its own fields onto a MongoServerError.
    const wrapped = new MongoBulkWriteError(down as never, { insertedCount: 0 } as never);
    expect(storeUnreachable(wrapped)).toBe(true);
    expect(toCuadraError(wrapped).code).toBe('unavailable');
  });
});
