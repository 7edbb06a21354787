// A bounded in-process map whose entries expire: the front door's short-lived caches (API keys,
// image documents, derivative presence) and local storage's verified folders share it. Past maxEntries it starts afresh rather than
// tracking recency: these caches only save round trips, and a full one means churn anyway.
export class ExpiringMap<V> {
  private readonly entries = new Map<string, { value: V; expires: number }>();

  /** ttlMs ≤ 0 stores nothing (the cache is off). */
  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries: number,
  ) {}

  /** The value, or undefined when absent or expired. */
  get(key: string, now = Date.now()): V | undefined {
    const hit = this.entries.get(key);
    if (!hit) return undefined;
    if (hit.expires > now) return hit.value;
    this.entries.delete(key);
    return undefined;
  }

  set(key: string, value: V, now = Date.now()): void {
    if (this.ttlMs <= 0) return;
    if (this.entries.size >= this.maxEntries) this.entries.clear();
    this.entries.set(key, { value, expires: now + this.ttlMs });
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }
}
