// Plans as data: quotas are enforced (storage on upload, transformations and bandwidth monthly).
export interface Plan {
  id: string;
  name: string;
  price_usd_per_month: number;
  storage_bytes: number;
  bandwidth_bytes_per_month: number;
  transformations_per_month: number;
  max_upload_bytes: number;
}

const MB = 1024 * 1024;
const GB = 1024 * MB;

export const PLANS: readonly Plan[] = [
  { id: 'free', name: 'Free', price_usd_per_month: 0, storage_bytes: 1 * GB, bandwidth_bytes_per_month: 10 * GB, transformations_per_month: 5_000, max_upload_bytes: 10 * MB },
  { id: 'pro', name: 'Pro', price_usd_per_month: 29, storage_bytes: 100 * GB, bandwidth_bytes_per_month: 1024 * GB, transformations_per_month: 100_000, max_upload_bytes: 20 * MB },
  { id: 'business', name: 'Business', price_usd_per_month: 199, storage_bytes: 1024 * GB, bandwidth_bytes_per_month: 10 * 1024 * GB, transformations_per_month: 1_000_000, max_upload_bytes: 50 * MB },
];

export function planById(id: string): Plan {
  return PLANS.find((p) => p.id === id) ?? PLANS[0];
}
