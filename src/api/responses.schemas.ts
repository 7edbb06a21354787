// The HTTP API's response bodies (200/202 bodies and error shapes) as JSON Schemas: the one
// source of each shape. The OpenAPI document's responses are these schemas; their types
// (response-types.ts) are inferred from them for the SDK and the front door's body builders;
// test/web/openapi.test.ts checks real answers of the service against them.
import { imageInfoSchema } from '../imaging/image-info-shape.js';
import { PASSPORT_COUNTRIES } from '../passport/specs.js';

const url = { type: 'string', format: 'uri', minLength: 1, maxLength: 2083 } as const;
const dateTime = { type: 'string', format: 'date-time' } as const;
const bytes = { type: 'number', minimum: 0 } as const;

// ── Error shapes ────────────────────────────────────────────────────────────────────────────

/** Set A errors (`/upload`, `/transform`, `/generate/srcset`). */
export const setAError = {
  $id: 'SetAError',
  type: 'object',
  description: 'Set A error: 400/404/409/413/415/429 request_error, 401 unauthorized_error, 422 image_processing_error, 5xx server_error.',
  properties: {
    type: { type: 'string', enum: ['request_error', 'unauthorized_error', 'image_processing_error', 'server_error'] },
    msg: { type: 'string' },
    status_code: { type: 'integer' },
  },
  required: ['type', 'msg', 'status_code'],
} as const;

/** Set B errors other than validation (every route outside set A). */
export const setBError = {
  $id: 'SetBError',
  type: 'object',
  properties: { detail: { type: 'string' } },
  required: ['detail'],
} as const;

/** Set B 422 (spec 2.9): every problem of header, query and body at once. */
export const setBValidationError = {
  $id: 'SetBValidationError',
  type: 'object',
  properties: {
    detail: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          loc: { type: 'array', items: { type: ['string', 'integer'] }, description: 'Location: header | query | body | path, then the field name' },
          msg: { type: 'string' },
          type: { type: 'string', description: 'missing, greater_than_equal, less_than_equal, enum, int_type, string_too_long, value_error, …' },
        },
        required: ['loc', 'msg', 'type'],
      },
    },
  },
  required: ['detail'],
} as const;

// ── Set A ───────────────────────────────────────────────────────────────────────────────────

/** What the finalize job learnt about an original (docs/transformations.md): in upload, listing and srcset answers. */
export const imageDescriptionProperties = {
  version: { type: 'string', description: "The original's version: pass it as `v` for immutable derivative URLs (srcset URLs carry it)" },
  thumbhash: { type: ['string', 'null'], description: 'ThumbHash placeholder (base64); null for images stored before placeholders existed' },
  dominant_color: { type: ['string', 'null'], pattern: '^#[0-9a-f]{6}$', description: 'Dominant colour `#rrggbb`' },
  lqip: { type: ['string', 'null'], maxLength: 1024, description: 'Tiny blurred preview, `data:image/webp;base64,…` (at most 1 kB)' },
  faces: {
    type: 'array',
    description: 'Face boxes found at upload, 0-1 of the auto-oriented image (used by gravity=face)',
    items: { type: 'object', properties: { x: { type: 'number' }, y: { type: 'number' }, w: { type: 'number' }, h: { type: 'number' } }, required: ['x', 'y', 'w', 'h'] },
  },
} as const;

/** Upload result (spec 2.1); `cdn_url` repeats `public_url` (the spec's worked examples use that name). */
export const uploadResultA = {
  $id: 'UploadResult',
  type: 'object',
  properties: {
    success: { type: 'boolean', default: false },
    error: { type: 'string', default: '' },
    public_url: url,
    cdn_url: url,
    size: bytes,
    content_type: { type: 'string', default: 'image/webp' },
    ...imageDescriptionProperties,
  },
  required: ['success', 'error', 'public_url', 'size', 'content_type'],
} as const;

/** Set B upload result: the set A fields plus the catalog record. */
export const uploadResultB = {
  $id: 'CdnUploadResult',
  type: 'object',
  properties: {
    ...uploadResultA.properties,
    imageId: { type: 'string' },
    project: { type: 'string', description: 'Project slug' },
    public_id: { type: 'string' },
    width: { type: 'integer' },
    height: { type: 'integer' },
    checksum: { type: 'string', description: 'SHA-256 of the stored bytes (hex)' },
  },
  required: [...uploadResultA.required, 'imageId', 'project', 'public_id', 'width', 'height'],
} as const;

/** Transform result (spec 2.2). */
export const transformResult = {
  $id: 'TransformResult',
  type: 'object',
  properties: {
    success: { type: 'boolean', default: false },
    error: { type: 'string', default: '' },
    public_url: url,
    size: bytes,
    content_type: { type: 'string', default: 'image/webp' },
  },
  required: ['success', 'error', 'public_url', 'size', 'content_type'],
} as const;

/** Source-set result (spec 2.3). */
export const srcsetResult = {
  $id: 'SrcsetResult',
  type: 'object',
  properties: {
    srcset: { type: 'string', default: '', description: 'Comma-separated `<signed transform URL> <width>w` entries, in the order of `w`' },
    sizes: { type: 'string', default: '' },
    default: { ...url, description: 'Fallback URL: the middle width (index floor((n-1)/2))' },
    ...imageDescriptionProperties,
  },
  required: ['srcset', 'sizes', 'default'],
} as const;

// ── Async jobs ──────────────────────────────────────────────────────────────────────────────

/** 202 answer of `Prefer: respond-async` / `?async=true`. */
export const jobAccepted = {
  $id: 'JobAccepted',
  type: 'object',
  properties: {
    job_id: { type: 'string' },
    state: { type: 'string', enum: ['queued'] },
    status_url: url,
  },
  required: ['job_id', 'state', 'status_url'],
} as const;

export const jobStatus = {
  $id: 'JobStatus',
  type: 'object',
  properties: {
    job_id: { type: 'string' },
    state: { type: 'string', enum: ['queued', 'waiting', 'prioritized', 'delayed', 'active', 'waiting-children', 'completed', 'failed'] },
    attempts: { type: 'integer', description: 'While not finished: attempts made so far' },
    result: { description: 'When completed: the body the synchronous call would have returned', anyOf: [{ $ref: '#/components/schemas/UploadResult' }, { $ref: '#/components/schemas/CdnUploadResult' }, { $ref: '#/components/schemas/TransformResult' }] },
    error: {
      type: 'object',
      description: 'When failed: the error the synchronous call would have returned',
      properties: { status: { type: 'integer' }, message: { type: 'string' } },
      required: ['status', 'message'],
    },
  },
  required: ['job_id', 'state'],
} as const;

// ── Set B ───────────────────────────────────────────────────────────────────────────────────

export const imageTestResult = {
  $id: 'ImageTestResult',
  type: 'object',
  properties: { valid: { type: 'boolean' }, user_id: { type: 'string' }, plan: { type: 'string' } },
  required: ['valid', 'user_id', 'plan'],
} as const;


/** GET /cdn/{image_id}/info and /image/info: the shape the analyze worker computes (its home). */
export const imageInfoResult = imageInfoSchema;

export const imageListResult = {
  $id: 'ImageList',
  type: 'object',
  properties: {
    images: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          imageId: { type: 'string' },
          public_url: url,
          public_id: { type: 'string' },
          project: { type: 'string', description: 'Project slug' },
          format: { type: 'string', enum: ['jpeg', 'png', 'webp', 'avif'] },
          width: { type: 'integer' },
          height: { type: 'integer' },
          size: bytes,
          checksum: { type: 'string' },
          created_at: dateTime,
          ...imageDescriptionProperties,
        },
        required: ['imageId', 'public_url', 'public_id', 'project', 'format', 'width', 'height', 'size', 'created_at'],
      },
    },
    next_cursor: { type: ['string', 'null'], description: 'Pass as `cursor` for the next page; null on the last page' },
    has_more: { type: 'boolean' },
  },
  required: ['images', 'next_cursor', 'has_more'],
} as const;

export const deleteImagesResult = {
  $id: 'DeleteImagesResult',
  type: 'object',
  properties: {
    deleted: { type: 'array', items: { type: 'string' } },
    not_found: { type: 'array', items: { type: 'string' }, description: "Unknown ids and other users' ids" },
  },
  required: ['deleted', 'not_found'],
} as const;

export const usageResult = {
  $id: 'Usage',
  type: 'object',
  properties: {
    storage_bytes: { ...bytes, description: 'Originals and derivatives' },
    image_count: { type: 'integer' },
    derivative_count: { type: 'integer' },
    derivative_bytes: { ...bytes, description: 'The part of storage_bytes taken by derivatives' },
    bandwidth_bytes: { ...bytes, description: 'This calendar month (UTC)' },
    transformations: { type: 'integer', description: 'This calendar month (UTC)' },
    period_start: dateTime,
    plan: { type: 'string' },
    limits: {
      type: 'object',
      properties: {
        storage_bytes: bytes,
        bandwidth_bytes_per_month: bytes,
        transformations_per_month: { type: 'integer' },
        max_upload_bytes: bytes,
      },
      required: ['storage_bytes', 'bandwidth_bytes_per_month', 'transformations_per_month', 'max_upload_bytes'],
    },
  },
  required: ['storage_bytes', 'image_count', 'derivative_count', 'bandwidth_bytes', 'transformations', 'period_start', 'plan', 'limits'],
} as const;

export const projectRecord = {
  $id: 'Project',
  type: 'object',
  properties: {
    projectId: { type: 'string' },
    name: { type: 'string' },
    slug: { type: 'string' },
    description: { type: ['string', 'null'] },
    image_count: { type: 'integer' },
    created_at: dateTime,
  },
  required: ['projectId', 'name', 'slug', 'description', 'image_count', 'created_at'],
} as const;

export const projectListResult = {
  $id: 'ProjectList',
  type: 'object',
  properties: { projects: { type: 'array', items: { $ref: '#/components/schemas/Project' } } },
  required: ['projects'],
} as const;

export const deleteProjectResult = {
  $id: 'DeleteProjectResult',
  type: 'object',
  properties: {
    deleted: { type: 'boolean' },
    projectId: { type: 'string' },
    images_moved: { type: 'integer' },
    images_deleted: { type: 'integer' },
  },
  required: ['deleted', 'projectId', 'images_moved', 'images_deleted'],
} as const;

export const plansResult = {
  $id: 'Plans',
  type: 'object',
  properties: {
    plans: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          id: { type: 'string' },
          name: { type: 'string' },
          price_usd_per_month: { type: 'number' },
          storage_bytes: bytes,
          bandwidth_bytes_per_month: bytes,
          transformations_per_month: { type: 'integer' },
          max_upload_bytes: bytes,
        },
        required: ['id', 'name', 'price_usd_per_month', 'storage_bytes', 'bandwidth_bytes_per_month', 'transformations_per_month', 'max_upload_bytes'],
      },
    },
  },
  required: ['plans'],
} as const;

// ── Passport ────────────────────────────────────────────────────────────────────────────────

export const passportSpecsResult = {
  $id: 'PassportSpecs',
  type: 'object',
  properties: {
    countries: { type: 'array', items: { type: 'string', enum: PASSPORT_COUNTRIES } },
    specs: {
      type: 'object',
      description: 'One record per document: print and digital size, DPI, head-height range, eye-line range and top margin (null where the document sets none), background, file-size limits (null = none), print-sheet layout, glasses and expression rules, notes, sources',
      additionalProperties: { type: 'object' },
    },
  },
  required: ['countries', 'specs'],
} as const;

/** An image of the passport answer: the data URL with its size and density, plus `extra` fields. */
const renderedImage = <W extends string, E extends Record<string, object>>(what: W, extra: E) =>
  ({
    type: 'object',
    properties: {
      data_url: { type: 'string', description: `The ${what} as a data:image/jpeg;base64 URL` },
      width: { type: 'integer' },
      height: { type: 'integer' },
      dpi: { type: 'integer' },
      ...extra,
    },
    required: ['data_url', 'width', 'height', 'dpi'],
  }) as const;

const photo = renderedImage('photo', { bytes, format: { type: 'string' }, quality: { type: 'integer' } } as const);
const printSheet = renderedImage('4x6 in print sheet', { copies: { type: 'integer' } } as const);

export const passportResult = {
  $id: 'PassportResult',
  type: 'object',
  description: 'JSON answer (default). With `Accept: image/jpeg` (and not application/json) the body is the photo itself.',
  properties: {
    success: { type: 'boolean' },
    country: { type: 'string', enum: PASSPORT_COUNTRIES },
    spec: { type: 'object', description: 'The specification applied (as in GET /passport-photo/specs)', properties: { name: { type: 'string' } }, required: ['name'] },
    photo: { ...photo, required: [...photo.required, 'bytes', 'format', 'quality'] },
    print_sheet: { anyOf: [{ ...printSheet, required: [...printSheet.required, 'copies'] }, { type: 'null' }] },
    face: {
      type: 'object',
      description: 'The face used, normalized to the input image (0-1)',
      properties: {
        box: { type: 'object', properties: { x: { type: 'number' }, y: { type: 'number' }, width: { type: 'number' }, height: { type: 'number' } }, required: ['x', 'y', 'width', 'height'] },
        confidence: { type: ['number', 'null'], description: 'Detector score; null for a manual box without a matching detection' },
        keypoints: {},
        detector: { type: 'string', enum: ['short', 'full', 'tiled', 'manual'] },
      },
      required: ['box', 'confidence', 'detector'],
    },
    measurements: { type: 'object', description: 'Head height, eye line, crown, chin, centring, roll, faces, scale, … measured on the output alone (null where it could not be measured)' },
    checks: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          name: { type: 'string' },
          passed: { type: 'boolean' },
          value: { type: ['number', 'string', 'null'] },
          expected: { type: ['string', 'null'], description: 'The rule in words; null when the document sets none (the check then passes and says so)' },
          severity: { type: 'string', enum: ['error', 'warning'], description: "'error': a failure makes the photo non-compliant; 'warning': advisory" },
          message: { type: 'string', description: 'What was found, in a plain sentence' },
          status: { type: 'string', enum: ['pass', 'borderline', 'fail'], description: "'borderline': the measure lies within `margin` of `limit` (then passed is false and severity 'warning': look at it)" },
          measure: { type: ['number', 'null'], description: 'The number decided on; null for a yes/no check' },
          limit: { type: ['number', 'null'], description: 'The limit the measure was nearest' },
          margin: { type: ['number', 'null'], description: 'The borderline margin around the limit' },
        },
        required: ['name', 'passed', 'value', 'expected', 'severity', 'message'],
      },
    },
    compliant: { type: 'boolean', description: "Every check of severity 'error' passed (a cut crown, closed or hidden eyes, glasses where forbidden, … make it false)" },
    warnings: { type: 'array', items: { type: 'string' } },
  },
  required: ['success', 'country', 'spec', 'photo', 'print_sheet', 'face', 'measurements', 'checks', 'compliant', 'warnings'],
} as const;

// ── Status ──────────────────────────────────────────────────────────────────────────────────

export const rootResult = {
  $id: 'ApiRoot',
  type: 'object',
  properties: {
    name: { type: 'string' },
    description: { type: 'string' },
    version: { type: 'string' },
    links: { type: 'object', additionalProperties: url },
  },
  required: ['name', 'description', 'version', 'links'],
} as const;

const healthCheck = {
  type: 'object',
  description: 'Public callers get `ok` only; latency, error text and detail (worker processes) need the admin credential',
  properties: { ok: { type: 'boolean' }, latency_ms: { type: 'integer' }, error: { type: 'string' }, detail: {} },
  required: ['ok'],
} as const;

export const healthResult = {
  $id: 'Health',
  type: 'object',
  description: 'Status 200 when every check passes, else 503 with the same body',
  properties: {
    status: { type: 'string', enum: ['ok', 'unhealthy'] },
    version: { type: 'string' },
    failing: { type: 'array', items: { type: 'string', enum: ['redis', 'catalog', 'storage', 'worker'] } },
    checks: {
      type: 'object',
      properties: { redis: healthCheck, catalog: healthCheck, storage: healthCheck, worker: healthCheck },
      required: ['redis', 'catalog', 'storage', 'worker'],
    },
  },
  required: ['status', 'version', 'failing', 'checks'],
} as const;

/** Every named response schema, for the OpenAPI components (keyed by `$id`). */
export const RESPONSE_SCHEMAS = [
  setAError,
  setBError,
  setBValidationError,
  uploadResultA,
  uploadResultB,
  transformResult,
  srcsetResult,
  jobAccepted,
  jobStatus,
  imageTestResult,
  imageInfoResult,
  imageListResult,
  deleteImagesResult,
  usageResult,
  projectRecord,
  projectListResult,
  deleteProjectResult,
  plansResult,
  passportSpecsResult,
  passportResult,
  rootResult,
  healthResult,
] as const;

/** Media types of binary image responses. */
export const IMAGE_MEDIA_TYPES = ['image/avif', 'image/webp', 'image/jpeg', 'image/png'] as const;

/** The placeholders and faces of an original, as one object (a part of several bodies). */
export const imageDescription = { type: 'object', properties: imageDescriptionProperties, required: ['version', 'thumbhash', 'dominant_color', 'lqip', 'faces'] } as const;
