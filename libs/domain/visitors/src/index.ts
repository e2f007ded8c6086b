export { COUNTRY_CODE, GEO_LOOKUP, type GeoLookup } from './geo';
export { type DeviceTarget, deviceTargetOf, UserAgentClassifier, type UserAgentFacts } from './user-agent';
export { VisitorIds } from './visitor-id';
