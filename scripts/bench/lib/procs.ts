// Process helpers for the bench: spawn and stop servers, wait for ports, read memory from /proc.
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import fs from 'node:fs';

export interface Spawned {
  name: string;
  child: ChildProcess;
  pid: number;
}

export function spawnNode(name: string, script: string, args: string[], env: NodeJS.ProcessEnv, logFile: string, extra: SpawnOptions = {}): Spawned {
  const out = fs.openSync(logFile, 'a');
  const child = spawn(process.execPath, [script, ...args], { env, stdio: ['ignore', out, out, 'ipc'], ...extra });
  fs.closeSync(out);
  if (!child.pid) throw new Error(`could not start ${name}`);
  return { name, child, pid: child.pid };
}

/** Same free-port probe as the Redis launcher. */
export { freePort } from '../../lib/redis-server.js';

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export async function stopProcess(child: ChildProcess, timeoutMs = 15_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  await new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
    }, timeoutMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** Children of a process (Linux: /proc/<pid>/task/<tid>/children). */
export function childPids(pid: number): number[] {
  const out: number[] = [];
  try {
    for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
      const text = fs.readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim();
      if (text) out.push(...text.split(/\s+/).map(Number));
    }
  } catch {
    // gone
  }
  return out;
}

export function cmdline(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
  } catch {
    return '';
  }
}

export function environOf(pid: number): Record<string, string> {
  try {
    const entries = fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean);
    return Object.fromEntries(entries.map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]));
  } catch {
    return {};
  }
}

function statusField(pid: number, field: 'VmHWM' | 'VmRSS'): number | null {
  try {
    const text = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text);
    return m ? Number(m[1]) * 1024 : null;
  } catch {
    return null;
  }
}

/** Peak resident set size since start or since the last resetPeak (bytes). */
export const peakRss = (pid: number) => statusField(pid, 'VmHWM');
export const currentRss = (pid: number) => statusField(pid, 'VmRSS');

/** Resets VmHWM to the current RSS (writing 5 to clear_refs); false where not permitted. */
export function resetPeak(pid: number): boolean {
  try {
    fs.writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

export function loadAverage(): number {
  try {
    return Number(fs.readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);
  } catch {
    return NaN;
  }
}

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

/**
 * CPU time (user + system) a process has used so far, in ms; null when it is gone. With
 * `reapedChildren`, plus that of its children that have exited and been waited for (how the load
 * generator counts the wrk runs it started).
 */
export function cpuMs(pid: number | 'self', reapedChildren = false): number | null {
  try {
    const text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    // fields[11..14] = utime, stime, cutime, cstime (per proc(5), 0-based from state)
    const ticks = Number(fields[11]) + Number(fields[12]) + (reapedChildren ? Number(fields[13]) + Number(fields[14]) : 0);
    return (ticks * 1000) / TICKS_PER_SECOND;
  } catch {
    return null;
  }
}

/** Waits until the processes use (almost) no CPU: in-flight work left by a finished load run is done. */
export async function quiesce(pids: number[], maxMs = 30_000): Promise<void> {
  const total = () => pids.reduce((sum, pid) => sum + (cpuMs(pid) ?? 0), 0);
  const deadline = Date.now() + maxMs;
  let last = total();
  let calm = 0;
  while (Date.now() < deadline) {
    await sleep(100);
    const now = total();
    calm = now - last <= 10 ? calm + 1 : 0;
    last = now;
    if (calm >= 3) return;
  }
}
