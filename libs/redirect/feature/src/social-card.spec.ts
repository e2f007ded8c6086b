import { SocialCards, socialCardHtml } from './social-card';

describe('social card page (docs/design.md, "Link options")', () => {
  it('carries Open Graph and Twitter Card tags, a meta refresh and a link to the next address, and no script', () => {
    const html = socialCardHtml(
      { title: 'Spring sale', description: 'Half price, this week only', image: 'https://cdn.example/spring.png' },
      'https://sho.rt/abc1234',
      'https://example.com/spring',
    );
    expect(html).toContain('<meta property="og:title" content="Spring sale">');
    expect(html).toContain('<meta property="og:description" content="Half price, this week only">');
    expect(html).toContain('<meta property="og:image" content="https://cdn.example/spring.png">');
    expect(html).toContain('<meta property="og:url" content="https://sho.rt/abc1234">');
    expect(html).toContain('<meta name="twitter:card" content="summary_large_image">');
    expect(html).toContain('<meta name="referrer" content="no-referrer">');
    expect(html).toContain('<meta name="twitter:title" content="Spring sale">');
    expect(html).toContain('<meta name="twitter:image" content="https://cdn.example/spring.png">');
    expect(html).toContain('<meta http-equiv="refresh" content="0;url=https://example.com/spring">');
    expect(html).toContain('<a href="https://example.com/spring">Spring sale</a>');
    expect(html).not.toMatch(/<script|<style|\son\w+=/i);
  });

  it('escapes every value, and leaves out the tags of what is not set (a summary card without an image)', () => {
    const html = socialCardHtml({ title: '"><script>alert(1)</script>', description: null, image: null }, 'https://sho.rt/x', 'https://example.com/?a=1&b="2"');
    expect(html).not.toContain('<script');
    expect(html).toContain('content="&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;"');
    expect(html).toContain('content="0;url=https://example.com/?a=1&amp;b=&quot;2&quot;"');
    expect(html).not.toMatch(/og:description|og:image|twitter:image|twitter:description/);
    expect(html).toContain('<meta name="twitter:card" content="summary">');
  });
});

describe('SocialCards', () => {
  const social = { title: 'Spring sale', description: null, image: null };

  it('renders a cached link’s card once per address form, and again for a changed link', () => {
    const cards = new SocialCards();
    const entry = { social };
    const target = 'https://example.com/';
    const first = cards.cardOf(entry, social, true, 'sho.rt', 'x', target);
    expect(first.html).toBe(socialCardHtml(social, 'https://sho.rt/x', 'https://example.com/'));
    expect(first.contentLength).toBe(String(Buffer.byteLength(first.html)));
    expect(cards.cardOf(entry, social, true, 'sho.rt', 'x', target)).toBe(first);
    // The same link over plain http, or under another of the tenant's names: og:url differs, so another card.
    expect(cards.cardOf(entry, social, false, 'sho.rt', 'x', target).html).toContain('content="http://sho.rt/x"');
    expect(cards.cardOf(entry, social, false, 'go.example', 'x', target).html).toContain('content="http://go.example/x"');
    // An edit replaces the cache entry: the new object gets its own card.
    const edited = { social: { ...social, title: 'Summer sale' } };
    expect(cards.cardOf(edited, edited.social, true, 'sho.rt', 'x', target).html).toContain('Summer sale');
  });

  it('counts the bytes of a title that is not ASCII, and leads a password link’s card to its own short URL', () => {
    const cards = new SocialCards();
    const card = cards.cardOf({}, { title: 'Soldes d’été 🌞', description: null, image: null }, true, 'sho.rt', 'pw', null);
    expect(Number(card.contentLength)).toBe(Buffer.byteLength(card.html));
    expect(Number(card.contentLength)).toBeGreaterThan(card.html.length);
    expect(card.html).toContain('content="0;url=https://sho.rt/pw"');
  });
});
