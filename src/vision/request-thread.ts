// A worker thread answering requests in order (`{id, ...}` in, `{id, result}` or `{id, error}`
// out), started on first use and keeping the process alive only while a call is in flight. A
// thread that dies or does not answer in time fails its calls in flight and is started again by
// the next call. Used by the detector thread (mediapipe/detector-thread.ts) and the edge thread
// (edge-bands.ts).
import { Worker } from 'node:worker_threads';

interface Reply {
  id: number;
  result?: unknown;
  error?: string;
}

interface Pending {
  resolve: (result: unknown) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
}

/** A running thread and the calls sent to it (a replaced thread fails only its own calls). */
interface RunningThread {
  worker: Worker;
  pending: Map<number, Pending>;
}

/**
 * A thread with the process's flags (loaders such as --import carry over), less --input-type,
 * which only an --eval string may have; when Node refuses one of them for a thread (process-wide
 * flags such as --expose-gc are refused when given explicitly), with none.
 */
function newWorker(url: URL): Worker {
  const execArgv = process.execArgv.filter((a) => !a.startsWith('--input-type'));
  try {
    return new Worker(url, { execArgv });
  } catch (err) {
    if ((err as { code?: string }).code !== 'ERR_WORKER_INVALID_EXEC_ARGV') throw err;
    return new Worker(url, { execArgv: [] });
  }
}

export class RequestThread {
  private current: RunningThread | null = null;
  private nextId = 0;

  /** `name` words the errors ("<name> did not answer within …"). */
  constructor(
    private readonly url: URL,
    private readonly name: string,
    private readonly defaultTimeoutMs: number,
  ) {}

  /** Sends `message` (its `transfer` buffers moved, not copied) and resolves with the thread's result. */
  call<T>(message: object, transfer: ArrayBuffer[], timeoutMs = this.defaultTimeoutMs): Promise<T> {
    const t = this.started();
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.end(t, new Error(`${this.name} did not answer within ${timeoutMs} ms; it is restarted for the next call`));
        void t.worker.terminate();
      }, timeoutMs);
      timer.unref();
      if (t.pending.size === 0) t.worker.ref();
      t.pending.set(id, { resolve: resolve as (r: unknown) => void, reject, timer });
      t.worker.postMessage({ id, ...message }, transfer);
    });
  }

  /** Ends the thread (worker shutdown); calls in flight fail. */
  async close(): Promise<void> {
    const t = this.current;
    if (!t) return;
    this.end(t, new Error(`${this.name} closed`));
    await t.worker.terminate();
  }

  private end(t: RunningThread, err: Error): void {
    if (this.current === t) this.current = null;
    for (const p of t.pending.values()) {
      clearTimeout(p.timer);
      p.reject(err);
    }
    t.pending.clear();
  }

  private started(): RunningThread {
    if (this.current) return this.current;
    const worker = newWorker(this.url);
    const t: RunningThread = { worker, pending: new Map() };
    worker.on('message', (m: Reply) => {
      const p = t.pending.get(m.id);
      if (!p) return;
      t.pending.delete(m.id);
      clearTimeout(p.timer);
      if (t.pending.size === 0) worker.unref();
      if (m.error === undefined) p.resolve(m.result);
      else p.reject(new Error(m.error));
    });
    worker.on('error', (err) => this.end(t, err));
    worker.on('exit', (code) => this.end(t, new Error(`${this.name} exited (${code})`)));
    // Referenced only while a call is in flight (attaching a 'message' listener refs it again).
    worker.unref();
    this.current = t;
    return t;
  }
}
