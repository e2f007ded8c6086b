import { CODE_SECRET } from '@shortlink/links-domain';
import { VISITOR_SECRET } from '@shortlink/clicks-domain';
import { resolveSecret } from '../secrets';
import { portSpec } from '../port';

/** The keys of the code scrambler and of the visitor hash: given, or kept in the data directory. */
export const secretsPort = portSpec({
  name: 'secrets',
  open: (config) => ({ code: resolveSecret(config.secrets.code), visitor: resolveSecret(config.secrets.visitor) }),
  provides: [
    [CODE_SECRET, (s) => s.code],
    [VISITOR_SECRET, (s) => s.visitor],
  ],
});
