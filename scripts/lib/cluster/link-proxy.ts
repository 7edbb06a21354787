// A slow, lossy link in user space (this kernel has no netem): a TCP relay that runs in a host's
// namespace, listens on its loopback and forwards to the data host. While impaired (SIGUSR1;
// SIGUSR2 restores a clean link) it behaves as `netem delay <delay> loss <loss>` on the host's
// interface looks to a TCP application (e.g. delay=200 loss=0.02):
//  - delay: every chunk the host sends is forwarded DELAY_MS later (each round trip + DELAY_MS);
//  - loss: TCP never loses bytes, it retransmits them. A lost segment is seen by the application as
//    the stream stalling for a retransmission timeout (Linux: at least 200 ms + the round trip) and
//    everything behind it in that direction waiting too (head-of-line blocking). So LOSS of the chunks,
//    in each direction, are held back by RETRANSMIT_MS with what follows them; LOSS of new
//    connections wait the initial SYN timeout (1 s) before they are accepted.
// Usage: node link-proxy.js delay=<ms> loss=<share> <listenPort>=<host>:<port> ...
import net from 'node:net';

const args = process.argv.slice(2);
const setting = (name: string) => Number(args.find((a) => a.startsWith(`${name}=`))?.slice(name.length + 1) ?? NaN);
const DELAY_MS = setting('delay');
const LOSS = setting('loss');
if (!(DELAY_MS >= 0) || !(LOSS >= 0 && LOSS < 1)) throw new Error('usage: link-proxy.js delay=<ms> loss=<share 0..1> <listenPort>=<host>:<port> ...');
const RETRANSMIT_MS = 200 + 2 * DELAY_MS;
const SYN_TIMEOUT_MS = 1000;

let impaired = false;
process.on('SIGUSR1', () => (impaired = true));
process.on('SIGUSR2', () => (impaired = false));

/**
 * Forwards one direction through a queue drained by one timer, in order: a chunk never overtakes
 * the one before it (separate timers of equal expiry may fire in any order, which would reorder
 * the byte stream).
 */
function relay(from: net.Socket, to: net.Socket, delayed: boolean): void {
  const queue: { at: number; chunk: Buffer }[] = [];
  let timer: NodeJS.Timeout | null = null;
  let lastAt = 0;
  let ended = false;
  const pump = () => {
    timer = null;
    while (queue.length > 0 && queue[0].at <= Date.now()) {
      const { chunk } = queue.shift()!;
      if (to.writable) to.write(chunk);
    }
    if (queue.length > 0) timer = setTimeout(pump, queue[0].at - Date.now());
    else if (ended) to.end();
  };
  from.on('data', (chunk: Buffer) => {
    const extra = impaired ? (delayed ? DELAY_MS : 0) + (Math.random() < LOSS ? RETRANSMIT_MS : 0) : 0;
    lastAt = Math.max(Date.now() + extra, lastAt);
    queue.push({ at: lastAt, chunk });
    if (!timer) pump();
  });
  from.on('end', () => {
    ended = true;
    if (!timer) pump();
  });
  from.on('error', () => to.destroy());
  from.on('close', () => {
    if (!ended) to.destroy();
  });
}

for (const spec of args.filter((a) => /^\d+=/.test(a))) {
  const [listen, target] = spec.split('=');
  const [host, port] = target.split(':');
  net
    .createServer((client) => {
      client.pause();
      const open = () => {
        const upstream = net.connect(Number(port), host);
        upstream.on('connect', () => client.resume());
        relay(client, upstream, true);
        relay(upstream, client, false);
      };
      if (impaired && Math.random() < LOSS) setTimeout(open, SYN_TIMEOUT_MS);
      else open();
    })
    .listen(Number(listen), '127.0.0.1', () => process.send?.({ type: 'ready' }));
}
