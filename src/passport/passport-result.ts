// What processPassportPhoto takes and gives: its own file, so the stages that build the result
// and the module that runs them do not import each other.
import type { DetectorModel } from '../vision/face-detector.js';
import type { FaceKeypoints } from '../vision/face-frame.js';
import type { ComplianceCheck } from './compliance-check.js';
import type { EnhanceParams } from './enhance.js';
import type { NormalizedBox } from './face-box.js';
import type { PassportCountry, PassportSpec } from './specs.js';

export interface PassportOptions {
  country: PassportCountry;
  /** Replace the background with the spec colour (default true). */
  removeBackground?: boolean;
  /** Mild exposure / white-balance / sharpening corrections (default true). */
  enhance?: boolean;
  /** Also produce a 4 x 6 in print sheet (default false). */
  includePrintSheet?: boolean;
  /** Manual face box (normalized): replaces detection. */
  faceBox?: NormalizedBox | null;
}

export interface PassportResult {
  country: PassportCountry;
  spec: PassportSpec;
  photo: { buffer: Buffer; width: number; height: number; bytes: number; dpi: number; format: 'jpeg'; quality: number };
  printSheet: { buffer: Buffer; width: number; height: number; copies: number; dpi: number } | null;
  face: {
    /** Normalized to the (EXIF-oriented) input image. */
    box: NormalizedBox;
    /** Detector score; null for a manual box without a matching detection. */
    confidence: number | null;
    keypoints: Record<keyof FaceKeypoints, { x: number; y: number }>;
    detector: DetectorModel | 'manual';
  };
  measurements: PassportMeasurements;
  checks: ComplianceCheck[];
  /** Every check of severity 'error' passed (warnings do not count). */
  compliant: boolean;
  warnings: string[];
  /** Milliseconds per stage. */
  timings: Record<string, number>;
}

/**
 * Measured on the produced photo alone (output pixels): null where it could not be measured there
 * (no face found on it; the crown not found for the head height and crown_y).
 */
export interface PassportMeasurements {
  /** Chin to crown over photo height. */
  head_height_ratio: number | null;
  /** Eye line above the bottom edge over photo height. */
  eye_line_ratio: number | null;
  head_height_px: number | null;
  eye_line_px: number | null;
  crown_y: number | null;
  chin_y: number | null;
  eye_y: number | null;
  face_center_x: number | null;
  horizontal_offset_ratio: number | null;
  /** Eye-line tilt in the input, the rotation applied, and the tilt left on the output (degrees). */
  input_roll_degrees: number;
  rotation_applied_degrees: number;
  output_roll_degrees: number | null;
  /** Significant faces found on the produced photo. */
  output_faces: number;
  /** Output pixels per source pixel. */
  scale: number;
  source_px_per_output_px: number;
  /** 'under_headwear': estimated from the face box because headwear covers the head. */
  crown_source: 'mask' | 'fallback' | 'under_headwear';
  headwear_detected: boolean;
  /** The crown / chin touches the input's edge (the head is cut off). */
  crown_cut: boolean;
  chin_cut: boolean;
  /** Share of the silhouette's edge ring showing the old background (null when the background was kept). */
  halo_share: number | null;
  planned_head_height_ratio: number;
  planned_eye_line_ratio: number;
  outside_fill_share: number;
  input_width: number;
  input_height: number;
  /** Detection and segmentation ran on a copy reduced by this (shrink-on-load for large JPEGs); the photo is rendered from full-size pixels. */
  decode_shrink: number;
  enhancement: EnhanceParams | null;
}
