// The plan limits that refuse work: monthly transformations and bandwidth (429 until the month
// ends), and storage for new derivatives (403, like an upload over the quota). Checked against
// an owner's counters as read at most QUOTA_CACHE_MS ago plus this front door's bandwidth not yet
// written, so a hot path costs a map lookup; the bound is late by at most that window (and the
// renders already under way), which docs/limits.md states. Counters older than that are used while
// a fresh read runs in the background, and when the catalog cannot be read the check lets the
// request through (an outage is not the customer's excess; stored images keep being served).
import { userPlanId } from '../../catalog/api-keys.js';
import type { Catalog } from '../../catalog/catalog.js';
import { planById, type Plan } from '../../catalog/plans.js';
import { nextPeriodStart, readUsage } from '../../catalog/usage.js';
import { ServiceError } from '../../errors.js';
import { LRUCache } from 'lru-cache';
import type { BandwidthCounter } from './bandwidth-counter.js';

interface OwnerStanding {
  plan: Plan;
  storageBytes: number;
  bandwidthBytes: number;
  transformations: number;
}

interface CachedStanding {
  standing: OwnerStanding | null;
  readAt: number;
  loading: Promise<OwnerStanding | null> | null;
}

export class PlanLimits {
  /** Each owner's standing as last read (QUOTA_CACHE_MS = 0: read on every check). */
  private readonly standings = new LRUCache<string, CachedStanding>({ max: 50_000 });

  constructor(
    private readonly catalog: Catalog,
    private readonly bandwidth: BandwidthCounter,
    private readonly cacheMs: number,
    private readonly onReadError: (err: unknown) => void = () => undefined,
  ) {}

  /** Before a new derivative is rendered for `ownerId` (cache hits are not transformations). */
  async assertMayTransform(ownerId: string, now = new Date()): Promise<void> {
    const s = await this.standingNow(ownerId);
    if (!s) return;
    const limit = s.plan.transformations_per_month;
    if (s.transformations >= limit) {
      throw this.monthly(`The image owner's plan "${s.plan.id}" allows ${limit} transformations per month (transformations_per_month) and they are used up; stored derivatives are still served`, now);
    }
    if (s.storageBytes >= s.plan.storage_bytes) {
      throw new ServiceError('forbidden', `The image owner's storage (storage_bytes ${s.plan.storage_bytes} of plan "${s.plan.id}", derivatives included) is full; no new derivatives until some images are deleted`);
    }
  }

  /** Before an async upload of about `bytes` is staged (the worker checks the quota exactly later). */
  async assertMayStore(ownerId: string, bytes: number): Promise<void> {
    const s = await this.standingNow(ownerId);
    if (s && s.storageBytes + bytes > s.plan.storage_bytes) {
      throw new ServiceError('forbidden', `Storage quota exceeded: ${s.storageBytes} bytes stored (derivatives included) + ${bytes} would exceed the ${s.plan.storage_bytes} bytes (storage_bytes) of plan "${s.plan.id}"`);
    }
  }

  /** Before image bytes of `ownerId` are sent. */
  async assertMayServe(ownerId: string, now = new Date()): Promise<void> {
    const s = await this.standingNow(ownerId);
    if (s && this.bandwidthUsedUp(s, ownerId)) {
      const limit = s.plan.bandwidth_bytes_per_month;
      throw this.monthly(`The image owner's plan "${s.plan.id}" allows ${limit} bytes of bandwidth per month (bandwidth_bytes_per_month) and they are used up`, now);
    }
  }

  /**
   * assertMayServe's answer when it needs no waiting (the hit path): true to serve, false when it
   * would refuse, null when the standing must be read first (then only assertMayServe decides).
   */
  mayServeNow(ownerId: string): boolean | null {
    const s = this.standingNow(ownerId);
    if (s instanceof Promise) return null;
    return !(s && this.bandwidthUsedUp(s, ownerId));
  }

  private bandwidthUsedUp(s: OwnerStanding, ownerId: string): boolean {
    return s.bandwidthBytes + this.bandwidth.pendingFor(ownerId) >= s.plan.bandwidth_bytes_per_month;
  }

  /** Forgets what was read about an owner (tests, and callers that just changed the counters). */
  forget(ownerId: string): void {
    this.standings.delete(ownerId);
  }

  private monthly(message: string, now: Date): ServiceError {
    const resetsAt = nextPeriodStart(now);
    return new ServiceError('rate_limited', `${message}; the limit resets at ${resetsAt.toISOString()}`, {
      retryAfterSeconds: Math.max(1, Math.ceil((resetsAt.getTime() - now.getTime()) / 1000)),
    });
  }

  /**
   * The owner's standing: fresh within cacheMs; older, it is used while one re-read runs in the
   * background; null (no check) when it was never read and cannot be now. A promise when the
   * caller has to wait for a read.
   */
  private standingNow(ownerId: string): OwnerStanding | null | Promise<OwnerStanding | null> {
    const now = Date.now();
    let entry = this.standings.get(ownerId);
    if (entry && this.cacheMs > 0 && now - entry.readAt < this.cacheMs) return entry.standing;
    if (!entry) {
      entry = { standing: null, readAt: 0, loading: null };
      this.standings.set(ownerId, entry);
    }
    const cached = entry;
    cached.loading ??= this.load(ownerId).then(
      (standing) => {
        cached.standing = standing;
        cached.readAt = Date.now();
        cached.loading = null;
        return standing;
      },
      (err: unknown) => {
        // Tried again after cacheMs; meanwhile the last standing (or none) stands.
        this.onReadError(err);
        cached.readAt = Date.now();
        cached.loading = null;
        return cached.standing;
      },
    );
    return cached.standing && this.cacheMs > 0 ? cached.standing : cached.loading;
  }

  private async load(ownerId: string): Promise<OwnerStanding> {
    const [planId, usage] = await Promise.all([userPlanId(this.catalog, ownerId), readUsage(this.catalog, ownerId)]);
    return {
      plan: planById(planId),
      storageBytes: usage.storageBytes,
      bandwidthBytes: usage.bandwidthBytes,
      transformations: usage.transformations,
    };
  }
}
