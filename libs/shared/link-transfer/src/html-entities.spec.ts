import { decodeHtmlEntities } from './html-entities';

describe('decodeHtmlEntities', () => {
  it('decodes what PHP’s htmlspecialchars and htmlentities write: the five, numeric references, Latin-1 and the special set', () => {
    expect(decodeHtmlEntities('Tips &amp; tricks &lt;b&gt; &quot;x&quot; It&#039;s &apos;')).toBe('Tips & tricks <b> "x" It\'s \'');
    expect(decodeHtmlEntities('caf&eacute; &nbsp;&copy;&yuml;&Agrave; &euro;5 &ndash; &hellip; &rsquo;')).toBe('café \u00a0©ÿÀ €5 – … ’');
    expect(decodeHtmlEntities('&#9786; &#x263A; &#X263a;')).toBe('☺ ☺ ☺');
  });

  it('decodes once, and leaves unknown names, non-characters and bare ampersands as written', () => {
    expect(decodeHtmlEntities('&amp;lt; &bogus; &#0; &#xD800; &#1114112; AT&T &amp')).toBe('&lt; &bogus; &#0; &#xD800; &#1114112; AT&T &amp');
  });
});
