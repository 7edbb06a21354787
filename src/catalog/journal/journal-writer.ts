// Append side of the catalog journal: records are appended in memory synchronously (in command
// order) and made durable by one flusher with group commit: it takes everything appended so far,
// writes it, fdatasyncs once and releases every waiter up to that position. While one flush is on
// disk the next group collects, so a sync is shared by all commands that finished meanwhile.
import type { FileHandle } from 'node:fs/promises';
import { durableFiles, writeAll } from '../../durable-files.js';
import { inDir, segmentName } from './journal-files.js';

interface PendingRecord {
  segment: number;
  frame: Buffer;
}

interface Waiter {
  position: number;
  resolve: () => void;
  reject: (err: Error) => void;
}

export interface JournalWriterStats {
  appendedBytes: number;
  records: number;
  syncs: number;
}

export class JournalWriter {
  private segment: number;
  private pending: PendingRecord[] = [];
  private waiters: Waiter[] = [];
  private handle: FileHandle | null = null;
  private handleSegment = -1;
  private flushing: Promise<void> | null = null;
  private failure: Error | null = null;
  /** Logical byte position of everything appended (across segments). */
  private appendedTo = 0;
  /** Everything up to here is on disk. */
  private durableTo = 0;
  private records = 0;
  private syncs = 0;

  constructor(
    private readonly dir: string,
    firstSegment: number,
    private readonly onFailure: (err: Error) => void = () => undefined,
  ) {
    this.segment = firstSegment;
  }

  get position(): number {
    return this.appendedTo;
  }

  get currentSegment(): number {
    return this.segment;
  }

  get failed(): Error | null {
    return this.failure;
  }

  stats(): JournalWriterStats {
    return { appendedBytes: this.appendedTo, records: this.records, syncs: this.syncs };
  }

  append(frame: Buffer): void {
    if (this.failure) throw this.failure;
    this.pending.push({ segment: this.segment, frame });
    this.appendedTo += frame.length;
    this.records++;
  }

  /** Later appends go to a new segment; returns its number. Synchronous, O(1). */
  rotate(): number {
    return ++this.segment;
  }

  /**
   * Resolves once everything appended up to `position` is on disk; null when it already is (the
   * caller can answer without a promise hop). Rejects after a write or sync failure.
   */
  whenDurable(position: number = this.appendedTo): Promise<void> | null {
    if (this.failure) return Promise.reject(this.failure);
    if (position <= this.durableTo) return null;
    const done = new Promise<void>((resolve, reject) => this.waiters.push({ position, resolve, reject }));
    this.flushing ??= this.flushLoop();
    return done;
  }

  /** Writes and syncs everything appended, then closes the segment file. */
  async close(): Promise<void> {
    try {
      await this.whenDurable();
      await this.flushing;
    } finally {
      await this.handle?.close();
      this.handle = null;
    }
  }

  private async flushLoop(): Promise<void> {
    try {
      while (this.pending.length > 0) {
        const batch = this.pending;
        this.pending = [];
        const target = this.appendedTo;
        let start = 0;
        while (start < batch.length) {
          let end = start;
          while (end < batch.length && batch[end].segment === batch[start].segment) end++;
          await this.writeToSegment(batch[start].segment, Buffer.concat(batch.slice(start, end).map((r) => r.frame)));
          start = end;
        }
        await durableFiles.datasync(this.handle!);
        this.syncs++;
        this.durableTo = target;
        this.release();
      }
    } catch (err) {
      this.fail(err instanceof Error ? err : new Error(String(err)));
    } finally {
      this.flushing = null;
    }
    // A waiter that arrived after the last batch was taken but before `flushing` was cleared.
    if (!this.failure && this.waiters.length > 0) this.flushing ??= this.flushLoop();
  }

  private async writeToSegment(segment: number, data: Buffer): Promise<void> {
    if (segment !== this.handleSegment) {
      if (this.handle) {
        await durableFiles.datasync(this.handle);
        await this.handle.close();
      }
      this.handle = await durableFiles.open(inDir(this.dir, segmentName(segment)), 'a', 0o600);
      this.handleSegment = segment;
      // the new file's directory entry must be durable before anything in it is acknowledged
      await durableFiles.syncDirectory(this.dir);
    }
    await writeAll(this.handle!, data);
  }

  private release(): void {
    const waiting: Waiter[] = [];
    for (const waiter of this.waiters) {
      if (waiter.position <= this.durableTo) waiter.resolve();
      else waiting.push(waiter);
    }
    this.waiters = waiting;
  }

  /** Stops acknowledging for good (a record could not be journaled). */
  abort(err: Error): void {
    if (!this.failure) this.fail(err);
  }

  private fail(err: Error): void {
    // Fail-stop: memory may now hold changes the disk does not, so nothing more is acknowledged.
    this.failure = new Error(`catalog journal write failed: ${err.message}`, { cause: err });
    for (const waiter of this.waiters) waiter.reject(this.failure);
    this.waiters = [];
    this.onFailure(this.failure);
  }
}
