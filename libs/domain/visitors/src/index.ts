export { COUNTRY_CODE, GEO_LOOKUP } from './geo';
export type { GeoLookup } from './geo';
export { deviceTargetOf, UserAgentClassifier } from './user-agent';
export type { DeviceTarget, UserAgentFacts } from './user-agent';
export { VisitorIds } from './visitor-id';
