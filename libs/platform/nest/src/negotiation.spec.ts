import { pageLanguage, prefersHtml } from './negotiation';

describe('prefersHtml (RFC 9110 §12.5.1)', () => {
  it('is true for what browsers send, false for API clients, curl and ties', () => {
    const cases: Array<[string | undefined, boolean]> = [
      ['text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8', true],
      ['text/html', true],
      ['text/*', true],
      [undefined, false],
      ['', false],
      ['*/*', false],
      ['application/json', false],
      ['application/problem+json, text/html', false],
      ['text/html;q=0.9, application/json', false],
      ['text/html;q=0', false],
      ['text/html;q=2', false],
      ['TEXT/HTML', true],
    ];
    expect(cases.map(([accept]) => [accept, prefersHtml(accept)])).toEqual(cases);
  });
});

describe('pageLanguage (RFC 4647 lookup over the languages we ship)', () => {
  const shipped = ['en', 'de', 'fr'] as const;
  it('takes the heaviest range we ship, by primary subtag, in the client’s order on ties; English otherwise', () => {
    const cases: Array<[string | undefined, string]> = [
      [undefined, 'en'],
      ['de', 'de'],
      ['de-AT', 'de'],
      ['es, fr;q=0.8, de;q=0.7', 'fr'],
      ['fr;q=0.5, de;q=0.5', 'fr'],
      ['ja, zh', 'en'],
      ['*', 'en'],
      ['en;q=0, *', 'de'],
      ['fr-CA;q=0, fr', 'fr'],
      ['de;q=abc, fr', 'fr'],
    ];
    expect(cases.map(([header]) => [header, pageLanguage(header, shipped)])).toEqual(cases);
  });
});
