// tasks-vision 1.1.0 creates a usage logger for every task that POSTs protobuf logs with the
// global fetch to https://odml.pa.googleapis.com/v1/log every 60 s and on close(). The service
// must not phone home: that request is answered inside the process with 403 (the library then
// marks its logger failed, clears the interval and never retries). Other fetch calls pass through
// untouched. The 60 s interval is also unref'd while tasks are created so it cannot keep a process
// alive (see withUnrefIntervals).

const TELEMETRY_HOSTS = new Set(['odml.pa.googleapis.com']);
const LOGGER_INTERVAL_MS = 60_000;
let installed = false;
let intercepted = 0;

function requestUrl(input: unknown): string {
  if (typeof input === 'string') return input;
  if (input instanceof URL) return input.href;
  if (typeof input === 'object' && input !== null && 'url' in input) return String((input as { url: unknown }).url);
  return String(input);
}

export function isTelemetryUrl(url: string): boolean {
  try {
    return TELEMETRY_HOSTS.has(new URL(url).hostname.toLowerCase());
  } catch {
    return false;
  }
}

export function installTelemetryBlock(): void {
  if (installed) return;
  installed = true;
  const downstream = globalThis.fetch;
  const blocked = async (input: Parameters<typeof fetch>[0], init?: Parameters<typeof fetch>[1]): Promise<Response> => {
    if (isTelemetryUrl(requestUrl(input))) {
      intercepted++;
      return new Response(null, { status: 403, statusText: 'telemetry disabled by pictor' });
    }
    return downstream(input, init);
  };
  globalThis.fetch = blocked as typeof fetch;
}

/** Number of telemetry requests answered locally so far. */
export function interceptedTelemetryRequests(): number {
  return intercepted;
}

/**
 * Runs `fn` (task creation) with setInterval patched so that the library's 60 s logger interval is
 * unref'd: an idle worker process with loaded models can still exit normally.
 */
export async function withUnrefIntervals<T>(fn: () => Promise<T>): Promise<T> {
  const original = globalThis.setInterval;
  const patched = ((handler: (...args: unknown[]) => void, ms?: number, ...args: unknown[]) => {
    const t = original(handler, ms, ...args);
    if (ms === LOGGER_INTERVAL_MS && typeof t === 'object' && t !== null && 'unref' in t) t.unref();
    return t;
  }) as typeof setInterval;
  globalThis.setInterval = patched;
  try {
    return await fn();
  } finally {
    globalThis.setInterval = original;
  }
}
