import { NotFoundException } from '@nestjs/common';
import { DomainError, ErrorCode } from '@shortlink/core';
import { invalidArgument, notImplemented, SHLINK_ERROR_TYPES, shlinkProblemOf, tagNotFound } from './shlink-problem';

describe('Shlink problems', () => {
  it('maps our slug, not-found and domain errors onto Shlink’s types and words', () => {
    expect(shlinkProblemOf(new DomainError(ErrorCode.ALIAS_TAKEN, 'taken', { alias: 'mine', domain: 'sho.rt' }), '/rest/v3/short-urls', true)).toEqual({
      type: SHLINK_ERROR_TYPES.INVALID_SLUG,
      title: 'Invalid custom slug',
      detail: 'Provided slug "mine" is already in use for domain "sho.rt".',
      status: 400,
      customSlug: 'mine',
      domain: 'sho.rt',
    });
    expect(shlinkProblemOf(new DomainError(ErrorCode.LINK_NOT_FOUND, 'no', { shortCode: 'abc', domain: 'sho.rt' }), undefined, true)).toMatchObject({
      type: 'https://shlink.io/api/error/short-url-not-found',
      status: 404,
      title: 'Short URL not found',
      shortCode: 'abc',
    });
    expect(shlinkProblemOf(new DomainError(ErrorCode.DOMAIN_NOT_FOUND, 'no', { domain: 'x.example' }), undefined, true)).toMatchObject({
      type: SHLINK_ERROR_TYPES.DOMAIN_NOT_FOUND,
      status: 404,
      authority: 'x.example',
    });
  });

  it('names the Shlink field of an invalid value (invalidElements)', () => {
    expect(shlinkProblemOf(new DomainError(ErrorCode.INVALID_URL, 'bad url'), undefined, true)).toMatchObject({
      type: SHLINK_ERROR_TYPES.INVALID_ARGUMENT,
      status: 400,
      invalidElements: ['longUrl'],
    });
    expect(shlinkProblemOf(new DomainError(ErrorCode.VALIDATION_FAILED, 'too many', { field: 'maxClicks' }), undefined, true)).toMatchObject({
      invalidElements: ['maxVisits'],
    });
    expect(shlinkProblemOf(new DomainError(ErrorCode.INVALID_ALIAS, 'bad alias'), undefined, true)).toMatchObject({ invalidElements: ['customSlug'] });
    expect(shlinkProblemOf(invalidArgument(['orderBy']), undefined, true)).toMatchObject({
      type: SHLINK_ERROR_TYPES.INVALID_ARGUMENT,
      invalidElements: ['orderBy'],
    });
  });

  it('tells a missing key from an invalid one, as Shlink does', () => {
    const unauthenticated = new DomainError(ErrorCode.UNAUTHENTICATED, 'no');
    expect(shlinkProblemOf(unauthenticated, undefined, false)).toMatchObject({ type: SHLINK_ERROR_TYPES.INVALID_AUTHORIZATION, status: 401 });
    expect(shlinkProblemOf(unauthenticated, undefined, true)).toMatchObject({
      type: SHLINK_ERROR_TYPES.INVALID_API_KEY,
      status: 401,
      title: 'Invalid API key',
    });
  });

  it('keeps our own problem for what Shlink has no type for (scope, plan limit, outage), and the 501 and tag problems of its own', () => {
    const scope = shlinkProblemOf(
      new DomainError(ErrorCode.INSUFFICIENT_SCOPE, 'lacks links:write', { scope: 'links:write' }),
      '/rest/v3/short-urls?x=1',
      true,
    );
    expect(scope).toMatchObject({ status: 403, code: 'INSUFFICIENT_SCOPE', detail: 'lacks links:write', scope: 'links:write' });
    expect(scope).not.toHaveProperty('instance');
    expect(shlinkProblemOf(new DomainError(ErrorCode.RATE_LIMITED, 'slow down', { retryAfterSeconds: 3 }), undefined, true)).toMatchObject({ status: 429 });
    expect(shlinkProblemOf(new Error('boom'), undefined, true)).toMatchObject({ status: 500, detail: 'internal error' });
    expect(shlinkProblemOf(notImplemented('mercureInfo', 'no hub'), undefined, true)).toEqual({
      type: SHLINK_ERROR_TYPES.NOT_IMPLEMENTED,
      title: 'Not implemented',
      detail: 'mercureInfo: no hub',
      status: 501,
      sdkMethod: 'mercureInfo',
    });
    expect(shlinkProblemOf(tagNotFound('red'), undefined, true)).toMatchObject({ type: SHLINK_ERROR_TYPES.TAG_NOT_FOUND, status: 404, tag: 'red' });
    expect(shlinkProblemOf(new NotFoundException(), '/rest/v3/nothing', true)).toMatchObject({ type: SHLINK_ERROR_TYPES.NOT_FOUND, status: 404 });
  });
});

describe('Shlink problems of the framework', () => {
  it('answers a malformed JSON body as Shlink’s invalid data', () => {
    const error = Object.assign(new Error('Unexpected token'), { statusCode: 400, code: 'FST_ERR_CTP_INVALID_JSON_BODY' });
    expect(shlinkProblemOf(error, '/rest/v3/short-urls', true)).toMatchObject({ type: SHLINK_ERROR_TYPES.INVALID_ARGUMENT, status: 400, code: 'INVALID_JSON' });
  });

  it('answers an outage with our 503 problem (its Retry-After kept by the filter)', () => {
    const down = new DomainError(ErrorCode.DEPENDENCY_UNAVAILABLE, 'the visits store is unavailable; retry shortly', { retryAfterSeconds: 5 });
    expect(shlinkProblemOf(down, undefined, true)).toMatchObject({ status: 503, code: 'DEPENDENCY_UNAVAILABLE', retryAfterSeconds: 5 });
  });
});
