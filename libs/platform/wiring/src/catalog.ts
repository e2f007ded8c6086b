import { busPort } from './ports/bus.port';
import { cachePort } from './ports/cache.port';
import { changesPort } from './ports/changes.port';
import { domainProbesPort } from './ports/domain-probes.port';
import { eventsPort } from './ports/events.port';
import { conversionsPort } from './ports/conversions.port';
import { geoPort } from './ports/geo.port';
import { linksPort } from './ports/links.port';
import { mailPort } from './ports/mail.port';
import { metaPort } from './ports/meta.port';
import { oidcPort } from './ports/oidc.port';
import { olapPort } from './ports/olap.port';
import { olapReaderPort } from './ports/olap-reader.port';
import { passwordsPort } from './ports/passwords.port';
import { safetyPort } from './ports/safety.port';
import { secretsPort } from './ports/secrets.port';
import { snapshotPort } from './ports/snapshot.port';
import { urlSafetyPort } from './ports/url-safety.port';
import { webhooksPort } from './ports/webhooks.port';
import { Port } from './port';

/** Every port the apps can ask for, in the order they are opened (and closed in reverse). */
export const PORT_CATALOG: readonly Port[] = [
  secretsPort,
  geoPort,
  passwordsPort,
  mailPort,
  oidcPort,
  urlSafetyPort,
  webhooksPort,
  safetyPort,
  domainProbesPort,
  metaPort,
  linksPort,
  cachePort,
  changesPort,
  snapshotPort,
  busPort,
  eventsPort,
  conversionsPort,
  olapPort,
  olapReaderPort,
];

/** The ports that provide the given tokens, in catalog order; a token no port provides is a wiring bug. */
export function portsFor(tokens: readonly symbol[]): Port[] {
  for (const token of tokens) {
    if (!PORT_CATALOG.some((port) => port.tokens.includes(token))) throw new Error(`no port provides ${token.toString()}`);
  }
  return PORT_CATALOG.filter((port) => port.tokens.some((t) => tokens.includes(t)));
}
