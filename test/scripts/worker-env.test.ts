// Worker processes get glibc malloc with two arenas unless jemalloc is asked for (and installed);
// what the caller already set is kept.
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { WORKER_NODE_FLAGS, workerEnv, workerExecArgv } from '../../scripts/lib/worker-env.js';

const WORKER_SH = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../scripts/worker.sh');
const JEMALLOC = ['/usr/lib/x86_64-linux-gnu/libjemalloc.so.2', '/usr/lib/aarch64-linux-gnu/libjemalloc.so.2'].find((p) => fs.existsSync(p));

describe('workerEnv', () => {
  it('defaults to glibc with MALLOC_ARENA_MAX=2 and preloads nothing', () => {
    const env = workerEnv({ PATH: '/usr/bin' });
    expect(env.MALLOC_ARENA_MAX).to.equal('2');
    expect(env.LD_PRELOAD).to.equal(undefined);
    expect(env.PATH).to.equal('/usr/bin');
  });

  it('keeps an explicit MALLOC_ARENA_MAX or LD_PRELOAD', () => {
    expect(workerEnv({ MALLOC_ARENA_MAX: '4' }).MALLOC_ARENA_MAX).to.equal('4');
    const preloaded = workerEnv({ PICTOR_ALLOCATOR: 'jemalloc', LD_PRELOAD: '/opt/libjemalloc.so' });
    expect(preloaded.LD_PRELOAD).to.equal('/opt/libjemalloc.so');
    expect(preloaded.MALLOC_ARENA_MAX).to.equal(undefined);
  });

  it('preloads Debian libjemalloc2 with PICTOR_ALLOCATOR=jemalloc (installed by npm run setup)', function () {
    // npm run setup installs libjemalloc2; a machine without it falls back to glibc (checked below).
    if (!JEMALLOC) {
      const env = workerEnv({ PICTOR_ALLOCATOR: 'jemalloc' });
      expect(env.LD_PRELOAD).to.equal(undefined);
      expect(env.MALLOC_ARENA_MAX).to.equal('2');
      return;
    }
    const env = workerEnv({ PICTOR_ALLOCATOR: 'jemalloc' });
    expect(env.LD_PRELOAD).to.equal(JEMALLOC);
    expect(env.MALLOC_ARENA_MAX).to.equal(undefined);
  });
});

describe('worker node flags', () => {
  it('workerExecArgv keeps the parent\'s flags and sets each worker flag once, replacing a different value', () => {
    const argv = workerExecArgv(['--enable-source-maps', '--initial-old-space-size=16']);
    expect(argv).to.include('--enable-source-maps');
    for (const flag of WORKER_NODE_FLAGS) expect(argv.filter((a) => a.split('=')[0] === flag.split('=')[0])).to.deep.equal([flag]);
  });

  it('scripts/worker.sh (Procfile, docker-compose) passes the same flags to node', () => {
    const exec = fs.readFileSync(WORKER_SH, 'utf8').split('\n').find((l) => /^exec node /.test(l));
    expect(exec, 'worker.sh has an "exec node" line').to.be.a('string');
    const args = exec!.split(/\s+/);
    expect(args.slice(2, args.indexOf('dist/workers/main.js'))).to.deep.equal([...WORKER_NODE_FLAGS]);
  });
});
