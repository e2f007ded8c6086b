/**
 * The harness shared by the benches (bench/*) and the e2e and resilience tiers (test/*): processes,
 * ports, polling, HTTP load, Prometheus metrics, link creation, load generators, CPU accounting,
 * CPU profiles, the local stack's status and markdown report helpers. Nothing here knows a bench.
 */
export { serverSecrets, startApp } from './apps';
export type { App } from './apps';
export { cpuSeconds } from './cpu';
export { keepAliveAgent, latency, pooled, postLater, send, steadyLoad, tally } from './http';
export type { Reply } from './http';
export { createLinks } from './links';
export type { CreatedLink } from './links';
export { closedLoop, defaultClosedLoopLoader } from './load/closed-loop';
export type { ClosedLoopLoader } from './load/closed-loop';
export { findVegeta, openLoop } from './load/open-loop';
export type { OpenLoopResult } from './load/open-loop';
export { requestOf } from './load/rig';
export type { LoadRig } from './load/rig';
export { byLabel, metric, metricsOf, parseMetrics, total } from './metrics';
export type { Metrics } from './metrics';
export { REPO_ROOT } from './paths';
export { eventually, sleep } from './poll';
export { allocateEndpoints, freePort } from './ports';
export type { Endpoints } from './ports';
export { Proc, ProcessGroup, startCommand, startProcess, waitHealthy, whenServing, withoutAppSettings } from './process';
export type { RunningProcess } from './process';
export { captureProfile, PROFILE_HOOK, profileHookEnv, summariseProfile } from './profile';
export { datedResultFile, firstLine, fmt, loadAverages, machineFacts, markdownTable, median, share } from './report';
export type { Column } from './report';
export { commandPath, shellOutput } from './shell';
export { stackState, waitStackUp } from './stack';
export type { StackComponent, StackState } from './stack';
