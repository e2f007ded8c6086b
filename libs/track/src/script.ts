/**
 * The first-party cookie script (docs/analytics.md, "Conversions"), as the redirect serves it at
 * `/sl-track.js` and the package ships it (`dist/sl-track.js`). On a landing page it reads the click
 * id the redirect added (`?sl_cid=…`, or the parameter `data-param` names), checks its form (22
 * characters of base64url) and keeps it in a first-party cookie (`sl_cid`, or `data-cookie`) on the
 * page's site (`data-domain` for a parent domain) for `data-days` (90) days: `path=/`,
 * `SameSite=Lax`, `Secure` on https. No dependency, no eval, no inline code, nothing sent anywhere:
 * a page with `script-src 'self' <short domain>` loads it. The same logic, for bundlers, is trackClickId.
 */
export const TRACK_SCRIPT =
  String.raw`(function(d,l){var s=d.currentScript,g=function(n,v){return s&&s.getAttribute("data-"+n)||v},` +
  String.raw`v=new URLSearchParams(l.search).get(g("param","sl_cid"));if(v&&/^[\w-]{22}$/.test(v)){var m=g("domain","");` +
  String.raw`d.cookie=g("cookie","sl_cid")+"="+v+"; path=/; max-age="+864e2*g("days",90)+"; samesite=lax"+(m?"; domain="+m:"")+` +
  String.raw`("https:"==l.protocol?"; secure":"")}})(document,location);` +
  '\n';

/** Where the redirect serves it, on every short domain (a path with a dot is never a code). */
export const TRACK_SCRIPT_PATH = '/sl-track.js';
