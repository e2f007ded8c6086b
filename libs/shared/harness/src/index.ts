/**
 * The harness shared by the benches (bench/*) and the e2e and resilience tiers (test/*): processes,
 * ports, polling, HTTP load, Prometheus metrics, link creation, load generators, CPU accounting,
 * CPU profiles, and markdown report helpers. Nothing here knows a bench.
 */
export { type App, serverSecrets, startApp } from './apps';
export { cpuSeconds } from './cpu';
export { keepAliveAgent, latency, pooled, postLater, type Reply, send, steadyLoad, tally } from './http';
export { type CreatedLink, createLinks } from './links';
export { closedLoop, type ClosedLoopLoader, defaultClosedLoopLoader } from './load/closed-loop';
export { findVegeta, openLoop, type OpenLoopResult } from './load/open-loop';
export { type LoadRig, requestOf } from './load/rig';
export { byLabel, metric, type Metrics, metricsOf, parseMetrics, total } from './metrics';
export { REPO_ROOT } from './paths';
export { eventually, sleep } from './poll';
export { allocateEndpoints, type Endpoints, freePort } from './ports';
export { Proc, ProcessGroup, type RunningProcess, startCommand, startProcess, waitHealthy, whenServing, withoutAppSettings } from './process';
export { captureProfile, PROFILE_HOOK, profileHookEnv, summariseProfile } from './profile';
export { type Column, datedResultFile, firstLine, fmt, loadAverages, machineFacts, markdownTable, median, share, writeResultFile } from './report';
export { commandPath, shellOutput } from './shell';
export { ZipfSampler } from './zipf';
export { lineChartsSvg, type Series } from './svg-chart';
