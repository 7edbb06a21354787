export const QUEUE_NAMES = {
  uploadFinalize: 'upload-finalize',
  transform: 'transform',
  passport: 'passport',
} as const;

export type QueueName = (typeof QUEUE_NAMES)[keyof typeof QUEUE_NAMES];

export const ALL_QUEUES: readonly QueueName[] = Object.values(QUEUE_NAMES);

/** BullMQ key prefix; also used for worker heartbeats. */
export const REDIS_PREFIX = 'pictor';

/** The upload-finalize job of an upload (one per upload: a repeated request finds it). */
export function uploadJobId(uploadId: string): string {
  return `up-${uploadId}`;
}
