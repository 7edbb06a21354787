// Passport / visa photo specifications as data: one record per country. GET /passport-photo/specs
// returns PASSPORT_SPECS as is; the processor reads the same records. Facts and sources:
// docs/spec/passport-specs.md. Verify against official pages before changing a number.

export const PASSPORT_COUNTRIES = ['usa', 'india', 'india_visa'] as const;
export type PassportCountry = (typeof PASSPORT_COUNTRIES)[number];

export type Range = readonly [min: number, max: number];

export interface PrintSheetLayout {
  /** Sheet size: 4 x 6 in photo paper, landscape. */
  widthIn: number;
  heightIn: number;
  dpi: number;
  widthPx: number;
  heightPx: number;
  /** Gap between copies in sheet pixels (0 = edge to edge, separated by the cut lines). */
  gapPx: number;
  /** Thin cut lines between and around the copies. */
  cutLines: boolean;
  /** Tiling: floor((sheet + gap) / (photo + gap)) per axis (checked by tests against printSheetTiling). */
  columns: number;
  rows: number;
  copies: number;
}

export interface PassportSpec {
  country: PassportCountry;
  name: string;
  /** Physical print size. */
  print: { widthMm: number; heightMm: number; widthIn: number; heightIn: number };
  /** Pixel size of the file we produce, and the range the authority accepts. */
  digital: {
    width: number;
    height: number;
    minWidth: number;
    maxWidth: number;
    minHeight: number;
    maxHeight: number;
    square: boolean;
  };
  /** DPI written into the file: digital pixels / print inches. */
  dpi: number;
  /** Chin to top of hair (hair included), as a share of the photo height and in mm. */
  headHeightRatio: Range;
  headHeightMm: Range;
  /** Eye line measured from the bottom edge, share of the photo height and mm. */
  eyeLineRatio: Range;
  eyeLineMm: Range;
  background: { name: string; hex: string; rgb: readonly [number, number, number] };
  format: 'jpeg';
  colorSpace: 'srgb';
  /** File-size limits in kB (min null = none). We treat max as 1000-byte kB and min as 1024-byte kB, so both readings hold. */
  fileSizeKb: { min: number | null; max: number };
  printSheet: PrintSheetLayout;
  /** Shown in the compliance report's warnings[] when the photo was digitally altered. */
  editedPhotoWarning: string | null;
  /** Glasses: 'forbidden' fails the glasses check; 'discouraged' makes it a warning. */
  glasses: GlassesRule;
  /** Expression: a natural smile allowed, or neutral with the mouth closed (the expression check is a warning). */
  expression: ExpressionRule;
  notes: string[];
}

export type GlassesRule = 'forbidden' | 'discouraged';
export type ExpressionRule = 'neutral_or_smile' | 'neutral_mouth_closed';

const WHITE = { name: 'white', hex: '#FFFFFF', rgb: [255, 255, 255] as const };

/** 2 x 2 in copies on a 4 x 6 in sheet at 300 DPI fit 3 x 2 only edge to edge: cut lines, no gap. */
const SHEET_2X2: PrintSheetLayout = {
  widthIn: 6, heightIn: 4, dpi: 300, widthPx: 1800, heightPx: 1200,
  gapPx: 0, cutLines: true, columns: 3, rows: 2, copies: 6,
};

/** US geometry on a 2 x 2 in square: head 1 to 1-3/8 in, eyes 1-1/8 to 1-3/8 in above the bottom. */
const US_GEOMETRY = {
  print: { widthMm: 51, heightMm: 51, widthIn: 2, heightIn: 2 },
  headHeightRatio: [1 / 2, 1.375 / 2] as const,
  headHeightMm: [25, 35] as const,
  eyeLineRatio: [1.125 / 2, 1.375 / 2] as const,
  eyeLineMm: [28, 35] as const,
};

export const PASSPORT_SPECS: Readonly<Record<PassportCountry, PassportSpec>> = {
  usa: {
    country: 'usa',
    name: 'United States passport (also DS-160 visa and DV lottery digital photos)',
    ...US_GEOMETRY,
    digital: { width: 600, height: 600, minWidth: 600, maxWidth: 1200, minHeight: 600, maxHeight: 1200, square: true },
    dpi: 300,
    background: WHITE,
    format: 'jpeg',
    colorSpace: 'srgb',
    fileSizeKb: { min: null, max: 240 },
    printSheet: SHEET_2X2,
    editedPhotoWarning:
      'travel.state.gov: photos "created or edited using AI or other digital tools" are not accepted; ' +
      'this photo had its background replaced and/or was enhanced and may be rejected. Use remove_bg=false ' +
      'and enhance=false with a photo taken against a plain white or off-white background to avoid edits.',
    // travel.state.gov: "Glasses are not allowed"; "neutral facial expression or a natural smile, with both eyes open".
    glasses: 'forbidden',
    expression: 'neutral_or_smile',
    notes: [
      'Digital: square, 600x600 to 1200x1200 px, JPEG, <= 240 kB, sRGB 24-bit.',
      'Plain white or off-white background, no shadows; eyes open, neutral expression or natural smile, no glasses.',
    ],
  },
  india: {
    country: 'india',
    name: 'India passport (applications abroad: embassies and VFS; US geometry on 2 x 2 in)',
    ...US_GEOMETRY,
    digital: { width: 600, height: 600, minWidth: 600, maxWidth: 1200, minHeight: 600, maxHeight: 1200, square: true },
    dpi: 300,
    background: WHITE,
    format: 'jpeg',
    colorSpace: 'srgb',
    // No digital limit in the gathered sources: 10-240 kB satisfies both the US-style 240 kB cap used
    // by VFS and the 10 kB minimum of the Indian visa portal.
    fileSizeKb: { min: 10, max: 240 },
    printSheet: SHEET_2X2,
    editedPhotoWarning: null,
    glasses: 'discouraged',
    expression: 'neutral_or_smile',
    notes: [
      'Abroad (embassies, VFS): 2 x 2 in, plain white/off-white, full head from top of hair to chin, centred; VFS USA uses the US geometry.',
      'Sources conflict (one embassy: face 70-80 % of the photo). In India adults are photographed at the Passport Seva Kendra; ' +
        'the printed 35 x 45 mm variant (face 80-85 %) and the 630 x 810 px upload are not modelled by this record.',
    ],
  },
  india_visa: {
    country: 'india_visa',
    name: 'India visa / e-Visa (square photo, US-like geometry)',
    ...US_GEOMETRY,
    // e-Visa: square, 10 kB-1 MB; regular online visa: 350-1000 px, 10-300 kB. 600-1000 px and 10-300 kB satisfy both.
    digital: { width: 600, height: 600, minWidth: 600, maxWidth: 1000, minHeight: 600, maxHeight: 1000, square: true },
    dpi: 300,
    background: WHITE,
    format: 'jpeg',
    colorSpace: 'srgb',
    fileSizeKb: { min: 10, max: 300 },
    printSheet: SHEET_2X2,
    editedPhotoWarning: null,
    glasses: 'discouraged',
    expression: 'neutral_or_smile',
    notes: [
      'JPEG, square (height = width), full face from top of hair to chin, eyes open, centred, plain light or white background, no shadows, no border.',
      'Head 25-35 mm and eyes 28-35 mm from the bottom on a 2 x 2 in square (regular online visa).',
    ],
  },
};

export function isPassportCountry(v: unknown): v is PassportCountry {
  return typeof v === 'string' && (PASSPORT_COUNTRIES as readonly string[]).includes(v);
}

export function getPassportSpec(country: PassportCountry): PassportSpec {
  return PASSPORT_SPECS[country];
}

/** Size of one printed copy on the sheet, in sheet pixels. */
export function printCopySizePx(spec: PassportSpec): { width: number; height: number } {
  const dpi = spec.printSheet.dpi;
  return { width: Math.round(spec.print.widthIn * dpi), height: Math.round(spec.print.heightIn * dpi) };
}

/** As many copies as fit: floor((sheet + gap) / (copy + gap)) per axis. */
export function printSheetTiling(spec: PassportSpec): { columns: number; rows: number; copies: number } {
  const { width, height } = printCopySizePx(spec);
  const s = spec.printSheet;
  const columns = Math.floor((s.widthPx + s.gapPx) / (width + s.gapPx));
  const rows = Math.floor((s.heightPx + s.gapPx) / (height + s.gapPx));
  return { columns, rows, copies: columns * rows };
}
