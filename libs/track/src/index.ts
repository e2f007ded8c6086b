// @shortlink/track: the first-party cookie script of conversion tracking (docs/analytics.md, "Conversions").
export { TRACK_SCRIPT, TRACK_SCRIPT_PATH } from './script';
export { clickIdFromCookies, trackClickId, type TrackEnvironment, type TrackOptions } from './track';
