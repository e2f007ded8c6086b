/** Time source, injectable so that expiry and windowing can be tested without sleeping. */
export interface Clock {
  now(): number;
}
export const systemClock: Clock = { now: () => Date.now() };
