import { requestLogLevel } from './app-factory';

describe('the level of a request log line', () => {
  it('is info for the console asking who is signed in without a session (a signed-out visitor is usual)', () => {
    expect(requestLogLevel('GET', '/api/v1/me', 401, false)).toBe('info');
  });

  it('stays a warning for every other refusal, a wrong key on /api/v1/me included, and an error for a failure', () => {
    expect(requestLogLevel('GET', '/api/v1/me', 401, true)).toBe('warn');
    expect(requestLogLevel('GET', '/api/v1/links', 401, false)).toBe('warn');
    expect(requestLogLevel('POST', '/api/v1/me', 401, false)).toBe('warn');
    expect(requestLogLevel('GET', '/api/v1/me', 403, false)).toBe('warn');
    expect(requestLogLevel('GET', '/api/v1/me', 503, false)).toBe('error');
    expect(requestLogLevel('GET', '/api/v1/me', 200, false)).toBe('info');
  });
});
