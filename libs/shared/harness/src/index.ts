/**
 * The harness shared by the benches (bench/*) and the e2e and resilience tiers (test/*): processes,
 * ports, polling, HTTP load, Prometheus metrics, link creation, load generators, CPU accounting,
 * CPU profiles, the local stack's status and markdown report helpers. Nothing here knows a bench.
 */
export * from './paths';
export * from './poll';
export * from './process';
export * from './ports';
export * from './apps';
export * from './http';
export * from './metrics';
export * from './links';
export * from './cpu';
export * from './load/rig';
export * from './load/closed-loop';
export * from './load/open-loop';
export * from './profile';
export * from './stack';
export * from './report';
export * from './shell';
