// Passport / visa photo specifications as data: one record per country. GET /passport-photo/specs
// returns PASSPORT_SPECS as is; the processor reads the same records. Facts and sources:
// docs/spec/passport-specs.md. Verify against official pages before changing a number.

export const PASSPORT_COUNTRIES = ['usa', 'india', 'india_visa', 'uk', 'schengen_visa', 'canada', 'china', 'japan'] as const;
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
  /**
   * Eye line measured from the bottom edge, share of the photo height and mm; null where the
   * document sets none (the crop is then planned by topMarginMm or by centring the head, and the
   * eye_line check reports "not set by this document").
   */
  eyeLineRatio: Range | null;
  eyeLineMm: Range | null;
  /** Gap from the top of the hair to the photo's top edge, mm, where the document sets one. */
  topMarginMm: Range | null;
  background: { name: string; hex: string; rgb: readonly [number, number, number] };
  format: 'jpeg';
  colorSpace: 'srgb';
  /**
   * File-size limits in kB (null = none; a printed-only document sets none). We treat max as
   * 1000-byte kB and min as 1024-byte kB, so both readings hold.
   */
  fileSizeKb: { min: number | null; max: number | null };
  printSheet: PrintSheetLayout;
  /** Shown in the compliance report's warnings[] when the photo was digitally altered. */
  editedPhotoWarning: string | null;
  /** Glasses: 'forbidden' fails the glasses check; 'discouraged' makes it a warning. */
  glasses: GlassesRule;
  /** Expression: a natural smile allowed, or neutral with the mouth closed (the expression check is a warning). */
  expression: ExpressionRule;
  notes: string[];
  /**
   * Where the numbers come from. A number is taken when an official page states it, or when at
   * least two independent sources agree and none contradicts (docs/spec/passport-specs.md).
   */
  sources: readonly PassportSource[];
}

export interface PassportSource {
  /** Null for the records taken from the interface spec's own facts. */
  url: string | null;
  /** 'official': a government or mission page; 'secondary': a restatement (used only where two or more agree). */
  kind: 'official' | 'secondary' | 'spec';
  /** What the source states that the record uses. */
  states: string;
}

export type GlassesRule = 'forbidden' | 'discouraged';
export type ExpressionRule = 'neutral_or_smile' | 'neutral_mouth_closed';

const WHITE = { name: 'white', hex: '#FFFFFF', rgb: [255, 255, 255] as const };

/**
 * What a printed-only document leaves unset: pixel size from its mm at PRINT_ONLY_DPI, JPEG sRGB,
 * no kB limit, no eye line and no top margin. A record spreads this and then sets what its
 * document does set.
 */
function printedOnly(widthMm: number, heightMm: number): Pick<
  PassportSpec,
  'print' | 'digital' | 'dpi' | 'format' | 'colorSpace' | 'fileSizeKb' | 'eyeLineRatio' | 'eyeLineMm' | 'topMarginMm'
> {
  const widthIn = widthMm / 25.4;
  const heightIn = heightMm / 25.4;
  const width = Math.round(widthIn * PRINT_ONLY_DPI);
  const height = Math.round(heightIn * PRINT_ONLY_DPI);
  return {
    print: { widthMm, heightMm, widthIn: Math.round(widthIn * 1000) / 1000, heightIn: Math.round(heightIn * 1000) / 1000 },
    digital: { width, height, minWidth: width, maxWidth: width, minHeight: height, maxHeight: height, square: false },
    dpi: PRINT_ONLY_DPI,
    format: 'jpeg',
    colorSpace: 'srgb',
    fileSizeKb: { min: null, max: null },
    eyeLineRatio: null,
    eyeLineMm: null,
    topMarginMm: null,
  };
}

/**
 * Printed-only documents: the file is made at 300 dpi, the resolution of the 4 x 6 in print sheet
 * (a 600 dpi file would need twice the input resolution for no gain on a 300 dpi print).
 */
export const PRINT_ONLY_DPI = 300;

function editedWarning(authority: string, rule: string): string {
  return `${authority}: ${rule}; this photo had its background replaced and/or was enhanced and may be rejected. ` +
    'Use remove_bg=false and enhance=false with a photo taken against a plain background to avoid edits.';
}

/** A layout on 4 x 6 in photo paper at 300 DPI, landscape, with cut lines. */
function sheet4x6(gapPx: number, columns: number, rows: number): PrintSheetLayout {
  return { widthIn: 6, heightIn: 4, dpi: 300, widthPx: 1800, heightPx: 1200, gapPx, cutLines: true, columns, rows, copies: columns * rows };
}

/** 2 x 2 in copies on a 4 x 6 in sheet at 300 DPI fit 3 x 2 only edge to edge: cut lines, no gap. */
const SHEET_2X2 = sheet4x6(0, 3, 2);
/** 35 x 45 mm copies (413 x 531 px at 300 dpi): 4 x 2 with 2 mm gaps and cut lines. */
const SHEET_35X45 = sheet4x6(24, 4, 2);
/** 33 x 48 mm copies (390 x 567 px): 4 x 2 with 2.5 mm gaps. */
const SHEET_33X48 = sheet4x6(30, 4, 2);
/** 50 x 70 mm copies (591 x 827 px): only 3 x 1 fit on 4 x 6 in, 1 mm gaps. */
const SHEET_50X70 = sheet4x6(12, 3, 1);

/**
 * US geometry on a 2 x 2 in square: head 1 to 1-3/8 in, eyes 1-1/8 to 1-3/8 in above the bottom;
 * a square JPEG of 600 to 1200 px on a white background, a neutral expression or a natural smile.
 */
const US_GEOMETRY = {
  print: { widthMm: 51, heightMm: 51, widthIn: 2, heightIn: 2 },
  headHeightRatio: [1 / 2, 1.375 / 2] as const,
  headHeightMm: [25, 35] as const,
  eyeLineRatio: [1.125 / 2, 1.375 / 2] as const,
  eyeLineMm: [28, 35] as const,
  topMarginMm: null,
  digital: { width: 600, height: 600, minWidth: 600, maxWidth: 1200, minHeight: 600, maxHeight: 1200, square: true },
  dpi: 300,
  background: WHITE,
  format: 'jpeg',
  colorSpace: 'srgb',
  printSheet: SHEET_2X2,
  expression: 'neutral_or_smile',
} as const;

const FROM_SPEC: readonly PassportSource[] = [
  { url: null, kind: 'spec', states: 'docs/spec/passport-specs.md (the interface spec\'s gathered facts; numbers unchanged)' },
];

export const PASSPORT_SPECS: Readonly<Record<PassportCountry, PassportSpec>> = {
  usa: {
    country: 'usa',
    name: 'United States passport (also DS-160 visa and DV lottery digital photos)',
    ...US_GEOMETRY,
    fileSizeKb: { min: null, max: 240 },
    editedPhotoWarning:
      'travel.state.gov: photos "created or edited using AI or other digital tools" are not accepted; ' +
      'this photo had its background replaced and/or was enhanced and may be rejected. Use remove_bg=false ' +
      'and enhance=false with a photo taken against a plain white or off-white background to avoid edits.',
    // travel.state.gov: "Glasses are not allowed"; "neutral facial expression or a natural smile, with both eyes open".
    glasses: 'forbidden',
    notes: [
      'Digital: square, 600x600 to 1200x1200 px, JPEG, <= 240 kB, sRGB 24-bit.',
      'Plain white or off-white background, no shadows; eyes open, neutral expression or natural smile, no glasses.',
    ],
    sources: FROM_SPEC,
  },
  india: {
    country: 'india',
    name: 'India passport (applications abroad: embassies and VFS; US geometry on 2 x 2 in)',
    ...US_GEOMETRY,
    // No digital limit in the gathered sources: 10-240 kB satisfies both the US-style 240 kB cap used
    // by VFS and the 10 kB minimum of the Indian visa portal.
    fileSizeKb: { min: 10, max: 240 },
    editedPhotoWarning: null,
    glasses: 'discouraged',
    notes: [
      'Abroad (embassies, VFS): 2 x 2 in, plain white/off-white, full head from top of hair to chin, centred; VFS USA uses the US geometry.',
      'Sources conflict (one embassy: face 70-80 % of the photo). In India adults are photographed at the Passport Seva Kendra; ' +
        'the printed 35 x 45 mm variant (face 80-85 %) and the 630 x 810 px upload are not modelled by this record.',
    ],
    sources: FROM_SPEC,
  },
  india_visa: {
    country: 'india_visa',
    name: 'India visa / e-Visa (square photo, US-like geometry)',
    ...US_GEOMETRY,
    // e-Visa: square, 10 kB-1 MB; regular online visa: 350-1000 px, 10-300 kB. 600-1000 px and 10-300 kB satisfy both.
    digital: { width: 600, height: 600, minWidth: 600, maxWidth: 1000, minHeight: 600, maxHeight: 1000, square: true },
    fileSizeKb: { min: 10, max: 300 },
    editedPhotoWarning: null,
    glasses: 'discouraged',
    notes: [
      'JPEG, square (height = width), full face from top of hair to chin, eyes open, centred, plain light or white background, no shadows, no border.',
      'Head 25-35 mm and eyes 28-35 mm from the bottom on a 2 x 2 in square (regular online visa).',
    ],
    sources: FROM_SPEC,
  },
  uk: {
    country: 'uk',
    name: 'United Kingdom passport (printed photo, HM Passport Office rules)',
    ...printedOnly(35, 45),
    headHeightRatio: [29 / 45, 34 / 45],
    headHeightMm: [29, 34],
    // "plain cream or light grey": the document names no colour value; this light grey is ours.
    background: { name: 'light grey', hex: '#E0E0E0', rgb: [224, 224, 224] },
    printSheet: SHEET_35X45,
    editedPhotoWarning: editedWarning('HM Passport Office', 'photos must be "unaltered by computer software"'),
    // Glasses allowed when the eyes are visible without glare or reflection; no sunglasses or tinted glasses.
    glasses: 'discouraged',
    expression: 'neutral_mouth_closed',
    notes: [
      'Printed: 45 mm high x 35 mm wide, crown to chin 29-34 mm, plain cream or light grey background, plain expression, mouth closed, eyes open and visible.',
      'Online applications ask for an uncropped digital photo of at least 600 x 750 px, 50 kB-10 MB (the service crops it); this record makes the printed photo.',
      'No eye-line range is published as a number (HMPO\'s template shows an eye band): the head is centred vertically.',
    ],
    sources: [
      { url: 'https://gov.tc/passports/photos', kind: 'official', states: '45 mm high by 35 mm wide; crown of the head to the chin 29-34 mm; cream or light grey background; neutral expression, mouth closed; glasses without glare, no sunglasses or tinted glasses; unaltered by computer software' },
      { url: 'https://www.elizabethg.co.uk/passport-photos', kind: 'secondary', states: 'the gov.uk "Photos for passports" text: 45 x 35 mm, plain expression, mouth closed, plain cream or light grey background, unaltered by computer software' },
      { url: 'https://portrait4u.co.uk/uk-british-passport-photograph', kind: 'secondary', states: '45 x 35 mm; crown to chin 29-34 mm' },
      { url: 'https://atpei.ca/united-kingdom-passport-photos/', kind: 'secondary', states: '45 x 35 mm; crown to chin 29-34 mm; light grey or cream background' },
      { url: 'https://mmichael1.blogspot.com/2024/05/passport-photos.html', kind: 'secondary', states: 'digital: at least 600 x 750 px, 50 kB-10 MB; do not crop' },
      { url: 'https://funandflip.com/news-detail/what-are-the-uk-passport-photo-requirements-everything-you-need-to-know.html', kind: 'secondary', states: 'digital: at least 600 x 750 px, 50 kB-10 MB' },
    ],
  },
  schengen_visa: {
    country: 'schengen_visa',
    name: 'Schengen visa (photo rules of the German missions, Auswärtiges Amt)',
    ...printedOnly(35, 45),
    headHeightRatio: [32 / 45, 36 / 45],
    headHeightMm: [32, 36],
    background: WHITE,
    printSheet: SHEET_35X45,
    editedPhotoWarning: editedWarning('Schengen consulates', 'photos changed with an image editor are not accepted (Italy\'s visa centre)'),
    // No reflections, no tinted glasses or sunglasses, frames must not cover the eyes.
    glasses: 'discouraged',
    expression: 'neutral_mouth_closed',
    notes: [
      '35 x 45 mm, face chin to top of the head 32-36 mm, centred; neutral expression, mouth closed; plain light background (white asked by the mission in Vietnam, neutral grey suggested in Bangkok).',
      'The German missions measure to the top of the head; this service measures to the top of the hair, as for every record.',
      'Bangkok asks for a print resolution of at least 600 dpi; the file is 300 dpi (the input resolution decides the detail).',
    ],
    sources: [
      { url: 'https://bangkok.diplo.de/th-de/service/02-PaesseAusweise/-/2448880', kind: 'official', states: 'face from the chin not smaller than 32 mm and not larger than 36 mm, centred; neutral expression, mouth closed; no reflections, no tinted glasses, frames must not cover the eyes; plain light background' },
      { url: 'https://havanna.diplo.de/cu-de/service/02-PaesseAusweise/-/2478946', kind: 'official', states: 'photo 3.5 x 4.5 cm; face height between 3.2 and 3.6 cm; mouth closed; no reflection on glasses' },
      { url: 'https://vietnam.diplo.de/vn-de/service/passbild/1279496', kind: 'official', states: 'visa photo 45 x 35 mm, white background, frontal, no head covering' },
      { url: 'https://italyvms.com/requisiti-delle-fotografie', kind: 'secondary', states: '35 x 45 mm, white background; photos edited with an electronic image editor are not accepted' },
    ],
  },
  canada: {
    country: 'canada',
    name: 'Canada passport (printed photo by a commercial photographer)',
    ...printedOnly(50, 70),
    headHeightRatio: [31 / 70, 36 / 70],
    headHeightMm: [31, 36],
    background: WHITE,
    printSheet: SHEET_50X70,
    editedPhotoWarning: editedWarning('Passport Canada', 'photos must be "original photos that are not altered in any way"'),
    // Glasses allowed when the eyes are clearly visible with no glare; no sunglasses or tinted glasses.
    glasses: 'discouraged',
    expression: 'neutral_mouth_closed',
    notes: [
      '50 mm wide x 70 mm high; chin to crown (natural top of head) 31-36 mm; face and shoulders centred; plain white or light-coloured background; neutral expression, eyes open, mouth closed, no smiling.',
      'The photo must be taken by a commercial photographer, who writes the studio name, address and date on the back; a guarantor signs one copy. This service cannot do either.',
      'No eye-line range is published: the head is centred vertically.',
    ],
    sources: [
      { url: 'https://ifixuphone.com/2023/10/20/canadian-passport-photos', kind: 'secondary', states: 'a copy of the canada.ca page: 50 mm wide by 70 mm high; face 31-36 mm from the chin to the crown (natural top of head); neutral expression; original photo not altered in any way' },
      { url: 'https://123passportphoto.com/?country=CA&type=Passport+%28By+photographer+or+studio%29', kind: 'secondary', states: 'the canada.ca list: 50 mm wide x 70 mm high, face 31-36 mm chin to crown (natural top of head); neutral expression, mouth closed, no smiling; plain white or light-coloured background; not altered in any way' },
      { url: 'https://jfanphoto.com/canadian-passport-photo-requirements/', kind: 'secondary', states: '50 x 70 mm; chin to crown 31-36 mm; neutral expression, mouth closed' },
      { url: 'https://www.theupsstore.ca/tag/passport', kind: 'secondary', states: '50 mm wide x 70 mm high; chin to top of head 31-36 mm' },
      { url: 'https://servicecanadapassport.ca/digital-canadian-passport-photos/', kind: 'secondary', states: 'glasses accepted if the eyes are clearly visible and there is no glare; no sunglasses or tinted glasses' },
    ],
  },
  china: {
    country: 'china',
    name: 'China passport (applications at Chinese embassies and consulates)',
    ...printedOnly(33, 48),
    headHeightRatio: [28 / 48, 33 / 48],
    headHeightMm: [28, 33],
    topMarginMm: [3, 5],
    background: WHITE,
    // The digital copy submitted with the printed photos: JPEG, 30-80 kB.
    fileSizeKb: { min: 30, max: 80 },
    printSheet: SHEET_33X48,
    editedPhotoWarning: editedWarning('Chinese missions', 'photos must not be edited after they are taken, and composites are not accepted'),
    // Glasses allowed; lenses must be clear and frames must not hide the eyes.
    glasses: 'discouraged',
    // "表情自然" (a natural expression), eyes open: no mouth rule is given.
    expression: 'neutral_or_smile',
    notes: [
      '33 mm wide x 48 mm high; head (chin to top of head) 28-33 mm; 3-5 mm from the top of the head to the top edge; at least 7 mm below the chin; head width 15-22 mm (not checked); white background.',
      'Digital copy: JPEG, 30-80 kB. Pixel size chosen: 390 x 567 px (33 x 48 mm at 300 dpi), the size of the mainland exit-entry photo standard as well.',
      'Applications in mainland China follow the exit-entry photo standard (head 30-34 mm, photographed at the office); not modelled.',
    ],
    sources: [
      { url: 'http://huzhao1.com/banli/zhaopian.html', kind: 'secondary', states: 'the missions\' e-passport photo rules: 33 x 48 mm, head width 15-22 mm, 3-5 mm from the top of the head to the top edge, >= 7 mm below the chin; JPEG 30-80 kB; clear lenses; no edits, no composites; upload at cs.mfa.gov.cn' },
      { url: 'https://bbs.sgcn.org/thread-16277781-3-1.html', kind: 'secondary', states: 'the same text with the head height: chin to top of head 28-33 mm; natural expression, eyes open; glasses with clear lenses' },
      { url: 'https://backgroundremoval.passlens.com/blog/china-passport-photo-requirements-guide', kind: 'secondary', states: '33 x 48 mm, head width 15-22 mm, head height 28-33 mm, top margin 3-5 mm, >= 7 mm below the chin, white background' },
      { url: 'http://xinshiwenhua.com.cn/bjchurujing/huzhao/61434.html', kind: 'secondary', states: 'mainland exit-entry standard: 390 x 567 px at 300 dpi' },
    ],
  },
  japan: {
    country: 'japan',
    name: 'Japan passport (Ministry of Foreign Affairs photo standard)',
    ...printedOnly(35, 45),
    headHeightRatio: [32 / 45, 36 / 45],
    headHeightMm: [32, 36],
    topMarginMm: [2, 6],
    // The standard sets no background colour, only "no background (including shadows)"; white is ours.
    background: WHITE,
    printSheet: SHEET_35X45,
    editedPhotoWarning: editedWarning('The Ministry of Foreign Affairs', 'processed images are not accepted'),
    // Glasses allowed; nothing (hair, frames, their shadows) may enter the eye area, no reflections.
    glasses: 'discouraged',
    // Smiles with raised mouth corners or visible teeth are not accepted.
    expression: 'neutral_mouth_closed',
    notes: [
      '45 mm high x 35 mm wide, no border; face from the top of the head (hair included) to the chin 34 +- 2 mm; 4 +- 2 mm above the head; no hat; plain background without shadows.',
      'No eye-line range: the crown is placed at the middle of the top-margin range.',
    ],
    sources: [
      { url: 'https://www.houston.us.emb-japan.go.jp/itpr_ja/pp_photo.html', kind: 'official', states: 'head from the top of the head to the chin 3.4 +- 0.2 cm; no smiles with raised mouth corners or teeth; nothing (hair, glasses, their shadows) in the eye area; no processed images' },
      { url: 'http://fukuoka-passport.com/photo/', kind: 'secondary', states: '45 x 35 mm, no border; face 34 mm +- 2 mm from the top of the head (hair included) to under the chin; 4 mm +- 2 mm above the head' },
      { url: 'https://kurashi.yahoo.co.jp/procedure/details/10010128?cityId=01234', kind: 'secondary', states: 'from the MOFA standard: 45 x 35 mm; 2-6 mm from the top edge to the top of the head; face 32-36 mm; chin 5-9 mm above the bottom edge; no background colour specified' },
    ],
  },
};

export function isPassportCountry(v: unknown): v is PassportCountry {
  return typeof v === 'string' && (PASSPORT_COUNTRIES as readonly string[]).includes(v);
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
