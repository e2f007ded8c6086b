/**
 * Preloaded into a process under test (`-r ./libs/shared/harness/src/profile-hook.ts`, see
 * profile.ts: PROFILE_HOOK, captureProfile) and active when BENCH_CPU_PROFILE_FILE is set.
 * Dormant until the first SIGWINCH: that one starts the V8 CPU profiler through an in-process
 * inspector session, the next one stops it and writes the .cpuprofile to BENCH_CPU_PROFILE_FILE
 * (atomically, via a .tmp file). Used instead of `node --cpu-prof` because Nest's shutdown hooks
 * re-raise SIGTERM, so the process never exits normally and --cpu-prof would write nothing.
 * SIGWINCH because it is ignored by default and is not one of the signals Nest's
 * enableShutdownHooks() listens to (SIGUSR2 is).
 */
import { renameSync, writeFileSync } from 'fs';
import { Session } from 'inspector';

const file = process.env.BENCH_CPU_PROFILE_FILE;
const intervalUs = Number(process.env.BENCH_CPU_PROFILE_INTERVAL_US || 500);

if (file) {
  let session: Session | null = null;
  let state: 'idle' | 'starting' | 'running' | 'stopping' = 'idle';
  const post = (method: string, params?: object) =>
    new Promise<unknown>((resolve, reject) => session!.post(method, params ?? {}, (err, res) => (err ? reject(err) : resolve(res))));

  process.on('SIGWINCH', () => {
    if (state === 'idle') {
      state = 'starting';
      session ??= new Session();
      try {
        session.connect();
      } catch {
        // already connected
      }
      post('Profiler.enable')
        .then(() => post('Profiler.setSamplingInterval', { interval: intervalUs }))
        .then(() => post('Profiler.start'))
        .then(() => {
          state = 'running';
          process.stderr.write('[profile-hook] CPU profiler started\n');
        })
        .catch((e) => {
          state = 'idle';
          process.stderr.write(`[profile-hook] start failed: ${(e as Error).message}\n`);
        });
    } else if (state === 'running') {
      state = 'stopping';
      post('Profiler.stop')
        .then((res) => {
          writeFileSync(`${file}.tmp`, JSON.stringify((res as { profile: unknown }).profile));
          renameSync(`${file}.tmp`, file);
          process.stderr.write(`[profile-hook] CPU profile written to ${file}\n`);
        })
        .catch((e) => process.stderr.write(`[profile-hook] stop failed: ${(e as Error).message}\n`))
        .finally(() => {
          state = 'idle';
          session?.disconnect();
          session = null;
        });
    }
  });
}
