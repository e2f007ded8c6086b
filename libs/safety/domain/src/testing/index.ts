export { InMemorySafetyStore } from './in-memory-safety-store';
export { HOSTS_SAMPLE, OPENPHISH_SAMPLE, PHISHTANK_SAMPLE, URLHAUS_SAMPLE } from './feed-samples';
export { RecordingNotices, safetyWorld } from './safety-world';
