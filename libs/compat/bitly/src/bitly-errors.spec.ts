import { DomainError, ErrorCode } from '@shortlink/core';
import { editOf, tokenOf } from './bitly.controller';
import { bitlyErrorOf, invalidArg } from './bitly-errors';

describe('Bitly errors and requests', () => {
  it('answers our errors in Bitly’s shape: credentials and scopes 403 FORBIDDEN, a bad URL INVALID_ARG_LONG_URL, a missing link NOT_FOUND', () => {
    expect(bitlyErrorOf(new DomainError(ErrorCode.UNAUTHENTICATED, 'unknown key'))).toEqual({
      status: 403,
      body: {
        message: 'FORBIDDEN',
        description: 'You are currently forbidden to access this resource.',
        resource: 'bitlinks',
        errors: [{ field: '', message: 'unknown key', error_code: 'unauthenticated' }],
      },
    });
    expect(bitlyErrorOf(new DomainError(ErrorCode.INSUFFICIENT_SCOPE, 'lacks links:write', { scope: 'links:write' })).body.message).toBe('FORBIDDEN');
    expect(bitlyErrorOf(new DomainError(ErrorCode.INVALID_URL, 'url must be http(s)', { field: 'url' }))).toEqual(
      invalidArg('long_url', 'url must be http(s)'),
    );
    expect(bitlyErrorOf(new DomainError(ErrorCode.LINK_NOT_FOUND, 'no link'))).toMatchObject({ status: 404, body: { message: 'NOT_FOUND' } });
    expect(bitlyErrorOf(new DomainError(ErrorCode.VALIDATION_FAILED, 'tags too long', { field: 'tags' })).body).toMatchObject({
      message: 'INVALID_ARG',
      errors: [{ field: 'tags', message: 'tags too long', error_code: 'validation_failed' }],
    });
  });

  it('says when to retry on 429 and 503 and tells nothing of internal errors', () => {
    expect(bitlyErrorOf(new DomainError(ErrorCode.RATE_LIMITED, 'plan', { retryAfterSeconds: 17 }))).toMatchObject({
      status: 429,
      retryAfter: '17',
      body: { message: 'RATE_LIMIT_EXCEEDED' },
    });
    expect(bitlyErrorOf(new DomainError(ErrorCode.SHARD_UNAVAILABLE, 'down'))).toMatchObject({
      status: 503,
      retryAfter: '1',
      body: { message: 'TEMPORARILY_UNAVAILABLE' },
    });
    expect(bitlyErrorOf(new Error('secret stack detail'))).toEqual({
      status: 500,
      body: { message: 'INTERNAL_ERROR', description: 'An internal error occurred.', resource: 'bitlinks' },
    });
  });

  it('takes the token as Bearer or bare', () => {
    expect(tokenOf('Bearer sl_abc')).toBe('sl_abc');
    expect(tokenOf('bearer   sl_abc ')).toBe('sl_abc');
    expect(tokenOf('sl_abc')).toBe('sl_abc');
    expect(tokenOf('')).toBeUndefined();
    expect(tokenOf(undefined)).toBeUndefined();
  });

  it('maps PATCH fields onto a link edit and refuses archiving', () => {
    expect(editOf({ title: 'Spring', tags: ['a'], long_url: 'https://example.com/', deeplinks: [] })).toEqual({
      title: 'Spring',
      tags: ['a'],
      url: 'https://example.com/',
    });
    expect(editOf({ title: '' })).toEqual({ title: null });
    expect(editOf({ archived: false })).toEqual({});
    expect(() => editOf({ archived: true })).toThrow('INVALID_ARG_ARCHIVED');
    expect(() => editOf({ tags: 'a' })).toThrow('INVALID_ARG_TAGS');
  });
});
