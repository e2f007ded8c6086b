import { GeoLocator, UserAgentClassifier } from '@shortlink/visitors-domain';
import { boundedSessionClient, SessionClient } from './ports';

/**
 * What a sign-in came from, for the person's list of sessions (docs/design.md, "People and
 * sessions"): the device, browser and OS of its user agent (the parser analytics uses) and the
 * approximate place of its address (the offline geo database the redirect uses: a country, or a
 * city with GEO_DATABASE=city). Only these are kept; a private or unknown address has no place.
 */
export class SessionClients {
  private readonly agents = new UserAgentClassifier(1000);

  constructor(private readonly geo: GeoLocator | null) {}

  describe(userAgent: string | string[] | undefined, address: string | null): SessionClient {
    const agent = typeof userAgent === 'string' ? userAgent : '';
    const facts = agent ? this.agents.classify(agent) : null;
    const place = address && this.geo ? this.geo.placeOf(address) : null;
    return boundedSessionClient({
      device: facts?.device,
      browser: facts && facts.browser !== 'Other' ? facts.browser : null,
      os: facts && facts.os !== 'Other' ? facts.os : null,
      country: place?.country,
      region: place?.region,
      city: place?.city,
    })!;
  }
}
