// Fallback loader of the harness's closed-loop runs (load/closed-loop.ts) when wrk is not installed (plain JS: autocannon has
// no type definitions). Reads its job from the BENCH_AC_JOB environment variable:
//   { "url": "http://127.0.0.1:PORT", "pathsFile": "/tmp/…/paths-….txt", "connections": 100, "duration": 10 }
// (one path per line, optionally with headers after tabs; or "paths": [...] inline)
// and prints one line "AC_JSON {...}" with the same fields the wrk script reports.
'use strict';
const autocannon = require('autocannon');

const job = JSON.parse(process.env.BENCH_AC_JOB || '{}');
const listed = job.pathsFile ? require('fs').readFileSync(job.pathsFile, 'utf8').split('\n').filter(Boolean) : job.paths;
const paths = listed && listed.length ? listed : ['/'];
autocannon(
  {
    url: job.url,
    connections: job.connections,
    duration: job.duration,
    timeout: 5,
    // each connection walks the list in order, starting at the same place; fine for a cache test
    // A path may carry headers after tabs (rig.ts, LoadTarget): "/abc\tName: value".
    requests: paths.map((line) => {
      const [path, ...headers] = line.split('\t');
      return { method: 'GET', path, headers: Object.fromEntries(headers.map((h) => [h.slice(0, h.indexOf(':')).trim(), h.slice(h.indexOf(':') + 1).trim()])) };
    }),
  },
  (err, r) => {
    if (err) {
      console.error(err);
      process.exit(1);
    }
    const ms = (v) => Math.round(v * 1000);
    const out = {
      requests: r.requests.total,
      duration_us: Math.round(r.duration * 1e6),
      bytes: r.throughput.total,
      errors: { connect: 0, read: r.errors - r.timeouts, write: 0, status: r['4xx'] + r['5xx'], timeout: r.timeouts },
      latency_us: {
        mean: ms(r.latency.mean),
        stdev: ms(r.latency.stddev),
        max: ms(r.latency.max),
        p50: ms(r.latency.p50),
        p90: ms(r.latency.p90),
        p99: ms(r.latency.p99),
        p999: ms(r.latency.p99_9 ?? r.latency.p99),
      },
    };
    process.stdout.write(`AC_JSON ${JSON.stringify(out)}\n`);
  },
);
