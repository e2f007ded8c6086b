export { COUNTRY_CODE, GEO_LOOKUP, type GeoLocator, type GeoLookup, type GeoPlace } from './geo';
export { LINK_PREVIEWER_AGENTS } from './link-previewers';
export {
  type DeviceTarget,
  deviceTargetOf,
  isBotUserAgent,
  isLinkPreviewer,
  platformOf,
  type PlatformBrowser,
  type PlatformSystem,
  UserAgentClassifier,
  type UserAgentFacts,
  type UserAgentPlatform,
} from './user-agent';
export { VisitorIds } from './visitor-id';
