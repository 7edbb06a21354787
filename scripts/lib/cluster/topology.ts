// The cluster's hosts as Linux network namespaces on one machine. Two bridges live in a switch
// namespace: the internal network (data host, worker hosts, front doors' internal side) and the
// public network (front doors' public side, the client). Every address is in 10.213.0.0/24 and no
// namespace has a default route, so nothing here can reach any other address. A link is one veth
// pair (host end, switch end); taking the switch end down is a pulled cable.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';

export const INTERNAL = { data: '10.213.0.2', w1: '10.213.0.11', w2: '10.213.0.12', f1: '10.213.0.21', f2: '10.213.0.22' } as const;
export const PUBLIC = { f1: '10.213.0.149', f2: '10.213.0.150', client: '10.213.0.160' } as const;
export type HostName = 'data' | 'w1' | 'w2' | 'f1' | 'f2' | 'client';
const HOSTS: readonly HostName[] = ['data', 'w1', 'w2', 'f1', 'f2', 'client'];

/** One link per host and network; the switch end's name (inside the switch namespace). */
const LINKS: { host: HostName; net: 'int' | 'pub'; address: string; switchEnd: string }[] = [
  { host: 'data', net: 'int', address: INTERNAL.data, switchEnd: 'data' },
  { host: 'w1', net: 'int', address: INTERNAL.w1, switchEnd: 'w1' },
  { host: 'w2', net: 'int', address: INTERNAL.w2, switchEnd: 'w2' },
  { host: 'f1', net: 'int', address: INTERNAL.f1, switchEnd: 'f1' },
  { host: 'f2', net: 'int', address: INTERNAL.f2, switchEnd: 'f2' },
  { host: 'f1', net: 'pub', address: PUBLIC.f1, switchEnd: 'f1p' },
  { host: 'f2', net: 'pub', address: PUBLIC.f2, switchEnd: 'f2p' },
  { host: 'client', net: 'pub', address: PUBLIC.client, switchEnd: 'client' },
];

/** Every namespace this harness names starts with this (a run adds its own tag after it). */
export const NAMESPACE_PREFIX = 'pictorcl';

function ip(args: string[]): string {
  const out = spawnSync('ip', args, { encoding: 'utf8' });
  if (out.status !== 0) throw new Error(`ip ${args.join(' ')}: ${(out.stderr || out.error?.message || '').trim()}`);
  return out.stdout;
}

/** Namespaces of any cluster run still present (ours or an interrupted earlier run's). */
export function leftoverNamespaces(): string[] {
  const out = spawnSync('ip', ['netns', 'list'], { encoding: 'utf8' }).stdout ?? '';
  return out.split('\n').map((l) => l.split(' ')[0]).filter((n) => n.startsWith(NAMESPACE_PREFIX));
}

/** Root-namespace links left by a run (a veth is made there before its ends are moved). */
export function leftoverLinks(): string[] {
  const out = spawnSync('ip', ['-o', 'link', 'show'], { encoding: 'utf8' }).stdout ?? '';
  return out.split('\n').map((l) => l.split(': ')[1]?.split('@')[0] ?? '').filter((n) => n.startsWith('pcl'));
}

/** Processes whose network namespace is one of `namespaces` (`net:[inode]` links under /proc), ours excepted. */
export function processesIn(namespaces: ReadonlySet<string>): number[] {
  return fs.readdirSync('/proc').flatMap((entry) => {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) return [];
    try {
      return namespaces.has(fs.readlinkSync(`/proc/${entry}/ns/net`)) ? [Number(entry)] : [];
    } catch {
      return []; // exited meanwhile
    }
  });
}

export class Topology {
  private readonly tag = randomBytes(2).toString('hex');
  private made = false;
  /** The namespaces' identities (`net:[inode]`), kept so that processes can be looked for after the names are gone. */
  readonly identities = new Set<string>();

  ns(host: HostName | 'sw'): string {
    return `${NAMESPACE_PREFIX}${this.tag}-${host}`;
  }

  /**
   * Makes the namespaces, bridges and links. Fails with one line when this process may not (not
   * root, or no `ip netns`): the suite never runs without its network.
   */
  create(): void {
    if (process.getuid?.() !== 0) throw new Error('needs root to make network namespaces (ip netns); run as root, as CI does');
    this.made = true;
    try {
      for (const ns of [this.ns('sw'), ...HOSTS.map((h) => this.ns(h))]) {
        ip(['netns', 'add', ns]);
        ip(['-n', ns, 'link', 'set', 'lo', 'up']);
        this.identities.add(`net:[${fs.statSync(`/run/netns/${ns}`).ino}]`);
      }
    } catch (err) {
      throw new Error(`cannot make network namespaces: ${(err as Error).message.split('\n')[0]}`);
    }
    const sw = this.ns('sw');
    for (const bridge of ['brint', 'brpub']) {
      ip(['-n', sw, 'link', 'add', bridge, 'type', 'bridge']);
      ip(['-n', sw, 'link', 'set', bridge, 'up']);
    }
    LINKS.forEach((link, i) => {
      const hostEnd = `pcl${this.tag}h${i}`;
      const switchEnd = `pcl${this.tag}s${i}`;
      ip(['link', 'add', hostEnd, 'type', 'veth', 'peer', 'name', switchEnd]);
      ip(['link', 'set', hostEnd, 'netns', this.ns(link.host)]);
      ip(['link', 'set', switchEnd, 'netns', sw]);
      const hostNs = this.ns(link.host);
      ip(['-n', hostNs, 'link', 'set', hostEnd, 'name', link.net === 'int' ? 'eth0' : 'eth1']);
      ip(['-n', hostNs, 'addr', 'add', `${link.address}/25`, 'dev', link.net === 'int' ? 'eth0' : 'eth1']);
      ip(['-n', hostNs, 'link', 'set', link.net === 'int' ? 'eth0' : 'eth1', 'up']);
      ip(['-n', sw, 'link', 'set', switchEnd, 'name', link.switchEnd]);
      ip(['-n', sw, 'link', 'set', link.switchEnd, 'master', link.net === 'int' ? 'brint' : 'brpub']);
      ip(['-n', sw, 'link', 'set', link.switchEnd, 'up']);
    });
  }

  /** Pulls (or plugs back) a host's cable to the internal network: it loses the data host. */
  setInternalLink(host: 'w1' | 'w2' | 'f1' | 'f2', up: boolean): void {
    ip(['-n', this.ns('sw'), 'link', 'set', host, up ? 'up' : 'down']);
  }

  /** Starts `command` inside a host's namespace (stdout/stderr appended to `logFile`). */
  spawnIn(host: HostName, command: string[], env: NodeJS.ProcessEnv, logFile: string, ipc = false): ChildProcess {
    const log = fs.openSync(logFile, 'a');
    const child = spawn('ip', ['netns', 'exec', this.ns(host), ...command], { env, stdio: ['ignore', log, log, ...(ipc ? ['ipc' as const] : [])] });
    fs.closeSync(log);
    return child;
  }

  /** Runs a short command inside a host's namespace; its stdout ('' when it fails). */
  run(host: HostName, command: string[], env: NodeJS.ProcessEnv = process.env): string {
    return spawnSync('ip', ['netns', 'exec', this.ns(host), ...command], { encoding: 'utf8', timeout: 90_000, env }).stdout ?? '';
  }

  /** Every process running in a host's namespace. */
  pids(host: HostName): number[] {
    const out = spawnSync('ip', ['netns', 'pids', this.ns(host)], { encoding: 'utf8' }).stdout ?? '';
    return out.split('\n').filter(Boolean).map(Number);
  }

  /** SIGKILL to every process of a host, as a power cut; resolves once none is left. */
  async killHost(host: HostName): Promise<number> {
    const killed = new Set<number>();
    for (let round = 0; round < 100; round++) {
      const pids = this.pids(host);
      if (pids.length === 0) return killed.size;
      for (const pid of pids) {
        try {
          process.kill(pid, 'SIGKILL');
          killed.add(pid);
        } catch {
          /* already gone */
        }
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`processes of ${host} survive SIGKILL: ${this.pids(host).join(', ')}`);
  }

  /** Kills every process in every namespace, then removes the namespaces (and with them every link and bridge). */
  async destroy(): Promise<void> {
    if (!this.made) return;
    for (const host of HOSTS) await this.killHost(host).catch(() => undefined);
    for (const ns of [...HOSTS.map((h) => this.ns(h)), this.ns('sw')]) spawnSync('ip', ['netns', 'del', ns]);
    for (const link of leftoverLinks().filter((l) => l.startsWith(`pcl${this.tag}`))) spawnSync('ip', ['link', 'del', link]);
    this.made = false;
  }
}
