// The answer of GET /cdn/{id}/info and /image/info, as the worker computes it and the front door
// and the SDK pass it on: one JSON Schema (the OpenAPI document's `ImageInfo`) and the type
// inferred from it. No sharp here: the front door imports it.
import type { FromSchema } from 'json-schema-to-ts';

const nullableString = { type: ['string', 'null'] } as const;

export const imageInfoSchema = {
  $id: 'ImageInfo',
  type: 'object',
  description: "An original's size, format and header facts, the placeholders and faces found at upload, three EXIF fields and whether it carries GPS (derivatives never carry EXIF or GPS).",
  properties: {
    width: { type: 'integer', description: 'After EXIF orientation' },
    height: { type: 'integer', description: 'After EXIF orientation' },
    format: { type: 'string', enum: ['jpeg', 'png', 'webp', 'avif'] },
    bytes: { type: 'integer', description: 'Size of the stored original' },
    has_alpha: { type: 'boolean' },
    space: { type: 'string', description: 'libvips colour space (srgb, cmyk, b-w, …)' },
    orientation: { type: 'integer', minimum: 1, maximum: 8, description: 'EXIF orientation (1 when absent)' },
    animated: { type: 'boolean' },
    frames: { type: 'integer', minimum: 1 },
    dominant_color: { ...nullableString, description: '#rrggbb' },
    thumbhash: { ...nullableString, description: 'ThumbHash, base64' },
    lqip: { ...nullableString, description: 'data:image/webp;base64,… (at most 1 kB)' },
    faces: { type: 'array', description: 'Found at upload; 0-1 of the auto-oriented image, largest first', items: { type: 'object', properties: { x: { type: 'number' }, y: { type: 'number' }, w: { type: 'number' }, h: { type: 'number' }, score: { type: 'number' } }, required: ['x', 'y', 'w', 'h', 'score'], additionalProperties: false } },
    exif: {
      type: ['object', 'null'],
      description: 'Only these three EXIF fields; null without EXIF',
      properties: { make: nullableString, model: nullableString, taken_at: { ...nullableString, description: "DateTimeOriginal: the camera's local time, ISO 8601 without zone" } },
      required: ['make', 'model', 'taken_at'],
      additionalProperties: false,
    },
    has_location: { type: 'boolean', description: 'The original carries GPS coordinates (EXIF or XMP)' },
  },
  required: ['width', 'height', 'format', 'bytes', 'has_alpha', 'space', 'orientation', 'animated', 'frames', 'dominant_color', 'thumbhash', 'lqip', 'faces', 'exif', 'has_location'],
  additionalProperties: false,
} as const;

export type ImageInfo = FromSchema<typeof imageInfoSchema>;
