// Several front-door processes behind one port (node:cluster), so the front door uses every core
// of its machine: the primary accepts connections and hands them to its children in turn, and
// each child is a whole FrontDoor (its own caches, Redis and catalog connections). A child that
// dies is replaced. /metrics, answered by whichever child gets the scrape, reports the HTTP
// metrics of all children (prom-client's AggregatorRegistry, collected here in the primary).
//
// Measured in scripts/bench (2 cores): /generate/srcset 5.2k req/s with one process, 6.6-8k with
// two; cache misses are unaffected (their cost is in the workers).
import cluster, { type Worker } from 'node:cluster';
import type { Logger } from 'pino';
import { AggregatorRegistry, type PrometheusContentType, type Registry } from 'prom-client';

/** IPC between a child and the primary: a child asks for the aggregated HTTP metrics. */
export const CLUSTER_METRICS_MESSAGE = 'pictor:cluster-metrics';
const RESTART_DELAY_MS = 1000;

interface MetricsMessage {
  type: typeof CLUSTER_METRICS_MESSAGE;
  id: number;
  text?: string;
  error?: string;
}

export class FrontDoorCluster {
  private stopping = false;
  private aggregator: AggregatorRegistry<PrometheusContentType> | null = null;

  constructor(
    private readonly processes: number,
    private readonly log: Logger,
  ) {}

  /** Starts the children one at a time (each seeds keys and connects before the next starts). */
  async start(): Promise<{ port: number }> {
    this.aggregator = new AggregatorRegistry();
    cluster.on('message', (worker, message: MetricsMessage) => {
      if (message?.type === CLUSTER_METRICS_MESSAGE) this.answerMetrics(worker, message.id);
    });
    cluster.on('exit', (worker, code, signal) => {
      if (this.stopping) return;
      this.log.error({ pid: worker.process.pid, code, signal }, 'a front-door process exited; starting another');
      setTimeout(() => {
        if (!this.stopping) this.fork().catch((err: unknown) => this.log.error({ err: String(err) }, 'restarting a front-door process failed'));
      }, RESTART_DELAY_MS).unref();
    });
    let port = 0;
    for (let i = 0; i < this.processes; i++) port = await this.fork();
    this.log.info({ processes: this.processes, port }, 'front-door cluster listening');
    return { port };
  }

  /** SIGTERM to every child (each finishes its in-flight requests), then resolves. */
  async close(): Promise<void> {
    this.stopping = true;
    const children = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined);
    await Promise.all(
      children.map(
        (w) =>
          new Promise<void>((resolve) => {
            if (w.isDead()) return resolve();
            w.once('exit', () => resolve());
            w.process.kill('SIGTERM');
          }),
      ),
    );
  }

  private fork(): Promise<number> {
    const worker = cluster.fork();
    return new Promise((resolve, reject) => {
      const onMessage = (m: { type?: string; port?: number }) => {
        if (m?.type !== 'listening') return;
        cleanup();
        resolve(m.port ?? 0);
      };
      const onExit = (code: number | null) => {
        cleanup();
        reject(new Error(`a front-door process exited with code ${code} while starting`));
      };
      const cleanup = () => {
        worker.off('message', onMessage);
        worker.off('exit', onExit);
      };
      worker.on('message', onMessage);
      worker.once('exit', onExit);
    });
  }

  private answerMetrics(worker: Worker, id: number): void {
    this.aggregator!.clusterMetrics().then(
      (text: string) => worker.send({ type: CLUSTER_METRICS_MESSAGE, id, text } satisfies MetricsMessage),
      (err: unknown) => worker.send({ type: CLUSTER_METRICS_MESSAGE, id, error: err instanceof Error ? err.message : String(err) } satisfies MetricsMessage),
    );
  }
}

let nextRequest = 0;

/**
 * In a cluster child: lets the primary collect `registry` from every child, and returns a function
 * that asks the primary for the aggregated text (used by GET /metrics).
 */
export function clusterMetricsSource(registry: Registry): () => Promise<string> {
  // Constructing one installs prom-client's answer to the primary's collection requests.
  new AggregatorRegistry();
  AggregatorRegistry.setRegistries([registry]);
  return () =>
    new Promise<string>((resolve, reject) => {
      const id = nextRequest++;
      const timer = setTimeout(() => {
        process.off('message', onMessage);
        reject(new Error('the front-door cluster did not answer with metrics within 5 s'));
      }, 5000);
      const onMessage = (m: MetricsMessage) => {
        if (m?.type !== CLUSTER_METRICS_MESSAGE || m.id !== id) return;
        clearTimeout(timer);
        process.off('message', onMessage);
        if (m.error !== undefined) reject(new Error(m.error));
        else resolve(m.text ?? '');
      };
      process.on('message', onMessage);
      process.send!({ type: CLUSTER_METRICS_MESSAGE, id } satisfies MetricsMessage);
    });
}
