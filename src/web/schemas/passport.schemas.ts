// Passport demo inputs (spec 4.2, "Passport demo inputs"). Validated by middleware/validate.ts;
// also the source of the OpenAPI document and of the controller's types.
import { PASSPORT_COUNTRIES } from '../../passport/specs.js';
import type { RouteInputs } from '../middleware/validate.js';
import { CASE_INSENSITIVE } from '../validation.js';

const faceCoordinate = <W extends string>(what: W) => ({ type: 'number', minimum: 0, maximum: 1, description: `Face box ${what}, normalized 0-1` }) as const;

const common = {
  country: { type: 'string', enum: PASSPORT_COUNTRIES, default: 'usa', [CASE_INSENSITIVE]: true },
  include_print_sheet: { type: 'boolean', default: false, description: 'Include a 4x6 in print sheet' },
  remove_bg: { type: 'boolean', default: true, description: "Replace the background with the spec's colour" },
  enhance: { type: 'boolean', default: true, description: 'Mild exposure, white balance and sharpening' },
  face_x: faceCoordinate('X'),
  face_y: faceCoordinate('Y'),
  face_width: faceCoordinate('width'),
  face_height: faceCoordinate('height'),
} as const;

export const passportUrlQuery = {
  $id: 'PassportUrlQuery',
  type: 'object',
  properties: { src: { type: 'string', minLength: 1, maxLength: 2083, description: 'Source image URL (http/https)' }, ...common },
  required: ['src'],
} as const;

export const passportUploadFields = {
  $id: 'PassportUploadFields',
  type: 'object',
  properties: common,
} as const;

export const passportUrlInputs = { query: passportUrlQuery } as const satisfies RouteInputs;
export const passportUploadInputs = { fields: passportUploadFields } as const satisfies RouteInputs;
