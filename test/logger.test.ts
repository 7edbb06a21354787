// The front door's buffered log (createLogger with `buffered`): lines are written in blocks, yet a
// line reaches stdout while the process runs (a flush every second), and whatever is buffered is written when the process
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
  it('writes a lone line while the process keeps running (periodic flush), not only at exit', async function () {
    this.timeout(20_000);
    // The child logs one line, then another when told to, and stays alive until its stdin ends:
    // each line must reach stdout while it runs. No time window: a logger that wrote only at exit
    // would never show the first line, and the child is then killed after 15 s.
    const script = `const { createLogger } = await import(${JSON.stringify(LOGGER)}); const log = createLogger('t', 'info', { buffered: true });
      log.info('first');
      process.stdin.on('data', () => log.info('second'));
      process.stdin.on('end', () => process.exit(0));`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['pipe', 'pipe', 'ignore'] });
    const giveUp = setTimeout(() => child.kill('SIGKILL'), 15_000);
    const seen: { msg: string; running: boolean }[] = [];
    let rest = '';
    child.stdout.on('data', (chunk: Buffer) => {
      rest += chunk.toString();
      const parts = rest.split('\n');
      rest = parts.pop()!;
      for (const line of parts) {
        const msg = (JSON.parse(line) as { msg: string }).msg;
        seen.push({ msg, running: child.exitCode === null && child.signalCode === null });
        if (msg === 'first') child.stdin.write('next\n');
        if (msg === 'second') child.stdin.end();
      }
    });
    const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
    clearTimeout(giveUp);
    expect(seen).to.deep.equal([
      { msg: 'first', running: true },
      { msg: 'second', running: true },
    ]);
    expect(code).to.equal(0);
  });

  it('writes everything buffered when the process exits, also on an uncaught exception', async () => {
    const exited = await runLogger(`for (let i = 0; i < 3; i++) log.info('line ' + i); process.exit(0);`);
    expect(exited.lines.map((l) => l.msg)).to.deep.equal(['line 0', 'line 1', 'line 2']);
    const thrown = await runLogger(`log.info('before the crash'); setTimeout(() => { throw new Error('boom'); }, 10);`);
    expect(thrown.code).to.equal(1);
    expect(thrown.lines.map((l) => l.msg)).to.deep.equal(['before the crash']);
  });
});
