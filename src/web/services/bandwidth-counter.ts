// Bandwidth accounting off the response path: bytes sent are summed per owner in memory and
// written as one $inc per owner every FLUSH_MS, so a served image costs a Map update instead of a
// catalog write. Nothing is dropped while the process lives: a failed write puts its bytes back
// for the next flush. Readers of usage call flush(owner) first, and shutdown flushes everything;
// only a crash (SIGKILL) can lose the last FLUSH_MS of counts.
import type { Logger } from 'pino';
import type { Catalog } from '../../catalog/catalog.js';
import { addMonthlyUsage } from '../../catalog/usage.js';

export const BANDWIDTH_FLUSH_MS = 250;

export class BandwidthCounter {
  private readonly pending = new Map<string, number>();
  private readonly writing = new Map<string, Promise<void>>();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly catalog: Catalog,
    private readonly log: Logger,
    private readonly flushMs = BANDWIDTH_FLUSH_MS,
  ) {}

  add(ownerId: string, bytes: number): void {
    if (bytes <= 0) return;
    this.pending.set(ownerId, (this.pending.get(ownerId) ?? 0) + bytes);
    if (!this.timer) {
      this.timer = setTimeout(() => {
        this.timer = null;
        void this.flush();
      }, this.flushMs);
      this.timer.unref();
    }
  }

  /** Bytes counted for the owner in this process and not yet written to the catalog. */
  pendingFor(ownerId: string): number {
    return this.pending.get(ownerId) ?? 0;
  }

  /** Writes what is pending (for one owner, or all) and waits for writes already under way. */
  async flush(ownerId?: string): Promise<void> {
    const owners = ownerId === undefined ? [...new Set([...this.pending.keys(), ...this.writing.keys()])] : [ownerId];
    await Promise.all(owners.map((owner) => this.flushOwner(owner)));
  }

  private async flushOwner(ownerId: string): Promise<void> {
    // One write per owner at a time; bytes added meanwhile go in the next one.
    while (this.writing.has(ownerId)) await this.writing.get(ownerId);
    const bytes = this.pending.get(ownerId);
    if (!bytes) return;
    this.pending.delete(ownerId);
    const write = addMonthlyUsage(this.catalog, ownerId, { bandwidthBytes: bytes }).then(
      () => undefined,
      (err: unknown) => {
        this.log.warn({ err, ownerId, bytes }, 'bandwidth write failed; kept for the next flush');
        this.add(ownerId, bytes);
      },
    );
    this.writing.set(ownerId, write);
    try {
      await write;
    } finally {
      this.writing.delete(ownerId);
    }
  }

  /** Shutdown: stop the timer and write everything (one retry for a failed write). */
  async close(): Promise<void> {
    this.stopTimer();
    await this.flush();
    if (this.pending.size > 0) await this.flush();
    // A failed write re-armed the timer: nothing is left to write it after shutdown.
    this.stopTimer();
  }

  private stopTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
