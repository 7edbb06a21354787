// Worker processes get glibc malloc with two arenas unless jemalloc is asked for (and installed);
// what the caller already set is kept.
import { expect } from 'chai';
import fs from 'node:fs';
import { workerEnv } from '../../scripts/lib/worker-env.js';

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
