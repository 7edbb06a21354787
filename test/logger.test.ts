// The front door's buffered log (createLogger with `buffered`): lines are written in blocks, yet a
// line reaches stdout within about a second, and whatever is buffered is written when the process
// exits, also through an uncaught exception. Runs the logger in a child process to see its stdout.
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const LOGGER = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../src/logger.js');

interface Seen {
  lines: { msg: string; at: number }[];
  code: number | null;
}

/** Runs `body` (with `log` in scope) in a child; records when each stdout line arrived. */
function runLogger(body: string): Promise<Seen> {
  const script = `const { createLogger } = await import(${JSON.stringify(LOGGER)}); const log = createLogger('t', 'info', { buffered: true }); ${body}`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'ignore'] });
  const started = performance.now();
  const seen: Seen = { lines: [], code: null };
  let rest = '';
  child.stdout.on('data', (chunk: Buffer) => {
    rest += chunk.toString();
    const parts = rest.split('\n');
    rest = parts.pop()!;
    for (const line of parts) seen.lines.push({ msg: (JSON.parse(line) as { msg: string }).msg, at: performance.now() - started });
  });
  return new Promise((resolve) => child.on('close', (code) => resolve({ ...seen, code })));
}

describe('createLogger (buffered)', () => {
  it('writes a lone line within about a second (periodic flush), long before the process ends', async function () {
    this.timeout(10_000);
    const seen = await runLogger(`log.info('first'); setTimeout(() => log.info('second'), 1200); setTimeout(() => {}, 3500);`);
    expect(seen.lines.map((l) => l.msg)).to.deep.equal(['first', 'second']);
    // Each line came with a flush ≤ 1 s after it was logged (plus the child's start-up), not at exit (~3.5 s).
    expect(seen.lines[0].at).to.be.below(2000);
    expect(seen.lines[1].at).to.be.within(1200, 2900);
  });

  it('writes everything buffered when the process exits, also on an uncaught exception', async () => {
    const exited = await runLogger(`for (let i = 0; i < 3; i++) log.info('line ' + i); process.exit(0);`);
    expect(exited.lines.map((l) => l.msg)).to.deep.equal(['line 0', 'line 1', 'line 2']);
    const thrown = await runLogger(`log.info('before the crash'); setTimeout(() => { throw new Error('boom'); }, 10);`);
    expect(thrown.code).to.equal(1);
    expect(thrown.lines.map((l) => l.msg)).to.deep.equal(['before the crash']);
  });
});
