// What one transform parameter is: its schema (type, range, default, the path sets that take it),
// how its value enters the plan, its part of the derivative key, and its pixel step (the stage it
// runs in and its `apply`), as ipx's handlers are. The handlers live in operations/, one small
// object per parameter; params.ts lists them in canonical order. Pure: no sharp at run time, so the
// front door, the client SDK and the dashboard load the same objects the worker renders with.
import type { OutputInfo, Sharp, SharpOptions } from 'sharp';
import type { NegotiationContext } from './formats.js';
import type { RenderNoteValues } from '../storage/derivative-metadata.js';

export type PathSet = 'A' | 'B';

export interface ParamDefinition {
  name: string;
  type: 'integer' | 'number' | 'string' | 'boolean';
  minimum?: number;
  maximum?: number;
  /** Integers only: allowed values are multiples of this (rot: 0, 90, 180, 270). */
  multipleOf?: number;
  enum?: readonly string[];
  /** Numbers only: words accepted besides a number in range (q's `auto`). */
  keywords?: readonly string[];
  /** Strings without an enum: the shape of a value (JSON Schema pattern). */
  pattern?: string;
  /** Shown in the OpenAPI document and the playground for free-form strings. */
  example?: string;
  /** Default in set A (spec table 4.1); undefined = not applied. */
  defaultA?: number | string;
  /** Default in set B (spec table 4.2); undefined = not applied. */
  defaultB?: number | string | boolean;
  sets: readonly PathSet[];
  description: string;
  /** A preset (PRESETS) may not set it: the preset itself (no nesting) and the version. */
  notInPresets?: true;
  /** Accepted beside a preset where the public route takes presets only (PUBLIC_PRESETS_ONLY). */
  withPresetsOnly?: true;
  /**
   * Continuous parameters are rounded to multiples of `step` before any key is made, so the
   * parameter space (and the derivatives one image can have) stays finite: 1.01 and 1.02 are
   * the same request.
   */
  step?: number;
}

/** The value type of one definition: its enum's members, a number, a boolean or a string. */
export type ParamValue<P extends ParamDefinition> = P extends { enum: readonly (infer E)[] }
  ? E
  : P extends { keywords: readonly (infer K)[] }
    ? number | K
    : P['type'] extends 'integer' | 'number'
    ? number
    : P['type'] extends 'boolean'
      ? boolean
      : string;

/**
 * Everything the worker needs to produce one derivative; also the source of its key. Each handler
 * file adds the fields its parameters own (TypeScript merges the declarations), so a field is
 * stated once, next to the code that fills and reads it.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface TransformPlan {}

export interface Size {
  width: number;
  height: number;
}

/** The watermark's original, found by the front door (an image of the same owner). */
export interface WatermarkSource {
  imageId: string;
  /** Storage key and version of the watermark's original (its version is part of the derivative key). */
  sourceKey: string;
  version: string;
}

/** What the catalog knows of the original a plan is made for (the front door passes it in). */
export interface SourceFacts extends Size {
  /** Face boxes found at upload (0-1 of the auto-oriented original); undefined when not known (detected at render). */
  faces?: readonly { x: number; y: number; w: number; h: number }[];
  /** Frames of an animated original (1 or undefined: a still image). */
  frames?: number;
}

/** What resolving a request needs besides its values. */
export interface PlanContext {
  set: PathSet;
  negotiation: NegotiationContext;
  /** Keyless routes: dpr never makes an output larger than this source (auto-oriented pixels). */
  dprCapSource?: Size;
  /** The image `wm` names, looked up by the front door; without it no watermark is planned. */
  watermark?: WatermarkSource;
  /** The original's facts (size, faces, frames), when the plan is made for a known image. */
  source?: SourceFacts;
  /** Set while resolving: the format follows the Accept header (the answer varies by it). */
  dependsOnAccept: boolean;
}

/** Request values by parameter name, as validated (cross-parameter reads, such as dpr by w). */
export type RequestValues = Readonly<Record<string, unknown>>;

/**
 * Where a parameter's `apply` runs, in this order: `decode` on the original as it is decoded;
 * `geometry` each on the pixels of the step before (so turns and mirrors happen exactly in registry
 * order, which sharp alone would reorder); `resize`; `effects`; colour conversion to sRGB;
 * `composite` on the finished pixels; `encode`.
 */
export const STAGES = ['decode', 'geometry', 'resize', 'effects', 'composite', 'encode'] as const;
export type Stage = (typeof STAGES)[number];

export interface EncoderSettings {
  avifEffort: number;
  webpEffort: number;
  maxInputPixels: number;
  /** libvips stops a render running longer than this (0 = no limit); see RenderTimeoutError. */
  timeoutSeconds?: number;
}

/** Bytes a plan needs besides its source (read by the worker from storage). */
export interface RenderInputs {
  /** The watermark's original, when plan.watermark is set. */
  watermark?: Buffer;
  /** The original's pixels kept by the worker (decoded-source.ts); absent: decoded from its bytes. */
  decodedSource?: DecodedSourceLookup;
}

/** The pixels of a render's JPEG original (stored size `source`) decoded at 1/shrink, if they can be had. */
export type DecodedSourceLookup = (shrink: number, source: Size) => Promise<DecodedSource | undefined>;

export interface DecodedSource {
  /**
   * The pixels as an uncompressed TIFF: libvips reads it sequentially, as it reads a JPEG, so
   * the resize runs in the same strips and gives the same bytes. (From raw pixels in memory,
   * libvips' vertical reduce works in other tiles and rounds some sizes differently.)
   */
  tiff: Buffer;
  width: number;
  height: number;
  /** The original's resolution in pixels per inch, which outputs that record one (PNG) carry. */
  density: number;
}

export type RawPixels = { data: Buffer; info: OutputInfo };

/** What an `apply` gets from the pipeline besides the image: sharp itself is the worker's. */
export interface ApplyContext {
  settings: EncoderSettings;
  inputs: RenderInputs;
  /** Size of the image the resize sees (after the geometry stage), read only when asked. */
  sourceSize(): Promise<Size>;
  load(input: Buffer, options: SharpOptions): Sharp;
  materialise(image: Sharp): Promise<RawPixels>;
  fromRaw(raw: RawPixels): Sharp;
  /** Face boxes (0-1) of materialised pixels, by the worker's face detector (faces unknown at upload). */
  detectFaces(raw: RawPixels): Promise<{ x: number; y: number; w: number; h: number }[]>;
  /** The pixels as RGBA with all but their people transparent, by the worker's segmenter; undefined: no person. */
  cutOutPeople(raw: RawPixels): Promise<RawPixels | undefined>;
  /** What the render tells besides its pixels (response headers, stored with the derivative); steps write it. */
  notes: RenderNotes;
}

/** What a render tells besides its pixels: answered as response headers on a miss and on every hit (their one home: storage/derivative-metadata.ts). */
export type RenderNotes = RenderNoteValues;

/** How the value enters the plan and its part of the derivative key. */
export interface PlanSteps<V> {
  /** Runs in registry order, so it may read earlier parameters' plan fields. */
  resolve?(plan: TransformPlan, value: V | undefined, request: RequestValues, ctx: PlanContext): void;
  /** Runs after every parameter's resolve, in registry order: for decisions that read the whole plan. */
  finish?(plan: TransformPlan, ctx: PlanContext): void;
  /** Its `name=value` pairs in the derivative key (and canonical URL), read from the plan. */
  key?(plan: TransformPlan): [string, string][];
}

/** A pixel step: all three, or none (the parameter's plan fields then shape another's step). */
export type PixelStep =
  | {
      stage: Stage;
      applies(plan: TransformPlan): boolean;
      apply(image: Sharp, plan: TransformPlan, ctx: ApplyContext): Sharp | Promise<Sharp>;
    }
  | { stage?: never; applies?: never; apply?: never };

export type ParamSteps<V> = PlanSteps<V> & PixelStep;

export type ParamHandler<D extends ParamDefinition> = D & ParamSteps<ParamValue<D>>;
/** Any handler, as the registry iterates them (each step reads its own value). */
export type AnyParamHandler = ParamDefinition & ParamSteps<unknown>;

/** A handler from its schema and its steps; the schema keeps its literals (names, enums, sets) for the generated types. */
export function defineParam<const D extends ParamDefinition>(definition: D, steps: ParamSteps<ParamValue<D>> = {}): ParamHandler<D> {
  return { ...definition, ...steps };
}

/** `[[name, String(value)]]` when the plan holds a value, else nothing: most parameters' key step. */
export function pairIf(name: string, value: string | number | undefined): [string, string][] {
  return value === undefined ? [] : [[name, String(value)]];
}

/**
 * Rounds a value of a stepped parameter to its nearest step (within its range), as a clean
 * decimal (0.30000000000000004 → 0.3); other parameters' values are returned unchanged.
 */
export function quantize(def: Pick<ParamDefinition, 'step' | 'minimum' | 'maximum'>, value: number): number {
  if (def.step === undefined || !Number.isFinite(value)) return value;
  const decimals = (String(def.step).split('.')[1] ?? '').length;
  let rounded = Number((Math.round(value / def.step) * def.step).toFixed(decimals));
  if (def.minimum !== undefined) rounded = Math.max(def.minimum, rounded);
  if (def.maximum !== undefined) rounded = Math.min(def.maximum, rounded);
  return rounded;
}
