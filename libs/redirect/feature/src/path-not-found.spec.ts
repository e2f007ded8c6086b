import type { FastifyRequest } from 'fastify';
import { pathNotFoundTarget } from './path-not-found';

describe('pathNotFoundTarget (Shlink’s regular 404)', () => {
  const req = (accept: string, host = 'sho.rt') => ({ raw: { headers: { accept, host } } }) as unknown as FastifyRequest;
  const handler = { servedDomainOf: (r: { headers: { host?: string } }) => (r.headers.host === 'pending.example' ? null : (r.headers.host ?? 'sho.rt')) };
  const settings: Record<string, { pathNotFoundRedirect: string | null }> = {
    'sho.rt': { pathNotFoundRedirect: 'https://example.com/lost' },
    'own.example': { pathNotFoundRedirect: null },
  };
  const pages = {
    wantsPage: (r: { headers: { accept?: string } }) => (r.headers.accept ?? '').includes('text/html'),
    settingsOf: (d: string) => settings[d] as never,
  };

  it('sends a browser to the domain’s path-not-found redirect', () => {
    expect(pathNotFoundTarget(req('text/html,*/*'), handler as never, pages as never)).toBe('https://example.com/lost');
  });

  it('leaves the 404 to any other client, a domain without the setting, and a domain that serves nothing', () => {
    expect(pathNotFoundTarget(req('application/json'), handler as never, pages as never)).toBeNull();
    expect(pathNotFoundTarget(req('text/html', 'own.example'), handler as never, pages as never)).toBeNull();
    expect(pathNotFoundTarget(req('text/html', 'nowhere.example'), handler as never, pages as never)).toBeNull();
    expect(pathNotFoundTarget(req('text/html', 'pending.example'), handler as never, pages as never)).toBeNull();
  });
});
