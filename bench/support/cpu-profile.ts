/**
 * Preloaded into a benchmark's server (`NODE_OPTIONS=--import <this file>`) to write a V8 CPU
 * profile of it: Node refuses `--cpu-prof` in NODE_OPTIONS, and the test helpers start `floe serve`
 * with no room for node flags. Profiles from start until the process exits (the server exits on
 * SIGTERM) and writes `<BENCH_CPU_PROF_DIR>/floe-<pid>.cpuprofile`, which Chrome DevTools and
 * speedscope open.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';

const dir = process.env.BENCH_CPU_PROF_DIR;
if (dir !== undefined && dir !== '') {
  const session = new Session();
  session.connect();
  // A session on the process's own thread dispatches synchronously, so the profile can be taken
  // in the `exit` handler, where nothing asynchronous runs any more.
  session.post('Profiler.enable');
  session.post('Profiler.setSamplingInterval', { interval: 200 });
  session.post('Profiler.start');
  process.on('exit', () => {
    session.post('Profiler.stop', (err, result) => {
      if (err === null) writeFileSync(join(dir, `floe-${process.pid}.cpuprofile`), JSON.stringify(result.profile));
    });
  });
}
