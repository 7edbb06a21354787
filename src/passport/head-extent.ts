// Is the whole head in the input, and is it covered by headwear? Both are decided in the face
// frame before the crop is planned, because they change what "head height" can mean:
//  - a crown (or chin) that touches the input's edge means the real head is taller than anything
//    that can be measured: the head_in_frame check fails (the output is still produced, and says so);
//  - headwear is measured as colour: the top of the silhouette (crown downwards) against the hair
//    beside the temples and the skin of the face. With headwear the head height is planned and
//    measured to an estimated crown under it (box top - CROWN_UNDER_HEADWEAR_RATIO box heights).
import { type FaceInFrame, type FrameMask } from './geometry.js';
import { type FaceFrame, fromFrame } from '../vision/face-frame.js';
import { type RawImage } from '../vision/raw-image.js';

export const HEAD_EXTENT = {
  /** The crown counts as touching the edge when a point this far above it (box heights, at least 2 px) is outside the input: the segmenter often leaves the last rows at a cut edge out of the mask. */
  EDGE_MARGIN_BOX: 0.05,
  /**
   * A crown found less than this many box heights above the face box's top is implausibly low for
   * a head (bald skulls ~0.25, with hair ~0.5-0.6) ...
   */
  MIN_CROWN_ABOVE_BOX: 0.35,
  /** ... and, when the input's edge is less than this many box heights above the box top, the head was cut there. */
  ROOM_ABOVE_BOX: 0.6,
  /** Chin: a point this far below it (box heights) must be inside the input. */
  CHIN_MARGIN_BOX: 0.04,
  /** Head-top band: from the crown down this share of the crown-to-box-top distance. */
  TOP_BAND_SHARE: 0.4,
  /**
   * Chromaticity distance (r, g, b over their sum) between the head-top band and both the temple
   * hair and the skin above which it is headwear. Chromaticity, not RGB: lit hair on the top of the
   * head is brighter than at the temples but has the same hue (corpus: 0.15); a dark blue hat over
   * brown hair: 0.55. A hat of the hair's or the skin's hue is not found (docs/passport.md).
   */
  HEADWEAR_MIN_DISTANCE: 0.25,
  /**
   * Estimated top of the hair under headwear: box top minus this many box heights (the mask crown
   * of bare heads in the corpus: 0.59 box heights; the skull alone ~0.3).
   */
  CROWN_UNDER_HEADWEAR_RATIO: 0.45,
} as const;

export interface HeadInFrame {
  crownCut: boolean;
  chinCut: boolean;
}

/** Whether the crown or the chin touches the input's edge (points just beyond them fall outside the image). */
export function headInFrame(frame: FaceFrame, face: FaceInFrame, crownB: number, imageWidth: number, imageHeight: number): HeadInFrame {
  const m = Math.max(2, HEAD_EXTENT.EDGE_MARGIN_BOX * face.boxHeight);
  const offsets = [-0.15, 0, 0.15].map((s) => s * face.boxWidth);
  const outside = ({ x, y }: { x: number; y: number }): boolean => x < 0 || y < 0 || x > imageWidth || y > imageHeight;
  const cut = (b: number): boolean => offsets.filter((da) => outside(fromFrame(frame, face.centerA + da, b))).length >= 2;
  // The segmenter often leaves the last rows of a cut head (a cap, hair against the edge) out of
  // the mask: a crown too close to the face with the edge just above is a cut crown too.
  const tooLow = face.boxTopB - crownB < HEAD_EXTENT.MIN_CROWN_ABOVE_BOX * face.boxHeight;
  const noRoom = cut(face.boxTopB - HEAD_EXTENT.ROOM_ABOVE_BOX * face.boxHeight);
  return {
    crownCut: cut(crownB - m) || (tooLow && noRoom),
    chinCut: cut(face.chinB + Math.max(2, HEAD_EXTENT.CHIN_MARGIN_BOX * face.boxHeight)),
  };
}

export interface HeadwearMeasure {
  detected: boolean;
  /** Chromaticity distance of the head-top band to the temple hair (null without hair there) and to the skin. */
  distanceToHair: number | null;
  distanceToSkin: number;
}

/** Mean RGB of the person pixels (p >= 0.5) of an RGBA grid inside a face-frame rectangle. */
function meanColour(img: RawImage, mask: FrameMask, a0: number, a1: number, b0: number, b1: number): { rgb: [number, number, number]; n: number } {
  const c0 = Math.max(0, Math.floor((a0 - mask.a0) / mask.step));
  const c1 = Math.min(mask.width - 1, Math.ceil((a1 - mask.a0) / mask.step));
  const r0 = Math.max(0, Math.floor((b0 - mask.b0) / mask.step));
  const r1 = Math.min(mask.height - 1, Math.ceil((b1 - mask.b0) / mask.step));
  const s = [0, 0, 0];
  let n = 0;
  for (let r = r0; r <= r1; r++) {
    for (let c = c0; c <= c1; c++) {
      const i = r * mask.width + c;
      if (mask.data[i] < 0.5) continue;
      const j = i * img.channels;
      s[0] += img.data[j];
      s[1] += img.data[j + 1];
      s[2] += img.data[j + 2];
      n++;
    }
  }
  return { rgb: n ? [s[0] / n, s[1] / n, s[2] / n] : [0, 0, 0], n };
}

function chromaDistance(a: readonly number[], b: readonly number[]): number {
  const sa = Math.max(1, a[0] + a[1] + a[2]);
  const sb = Math.max(1, b[0] + b[1] + b[2]);
  return Math.hypot(a[0] / sa - b[0] / sb, a[1] / sa - b[1] / sb, a[2] / sa - b[2] / sb);
}

/** Headwear from colour: `img` is the segmentation region (RGBA) sampled on `mask`'s grid. */
export function measureHeadwear(img: RawImage, mask: FrameMask, face: FaceInFrame, crownB: number): HeadwearMeasure {
  const bw = face.boxWidth;
  const bh = face.boxHeight;
  const a = face.centerA;
  const bandBottom = crownB + HEAD_EXTENT.TOP_BAND_SHARE * Math.max(0, face.boxTopB - crownB);
  const top = meanColour(img, mask, a - 0.3 * bw, a + 0.3 * bw, crownB, bandBottom);
  const left = meanColour(img, mask, a - 0.62 * bw, a - 0.45 * bw, face.boxTopB, face.boxTopB + 0.3 * bh);
  const right = meanColour(img, mask, a + 0.45 * bw, a + 0.62 * bw, face.boxTopB, face.boxTopB + 0.3 * bh);
  const skin = meanColour(img, mask, a - 0.15 * bw, a + 0.15 * bw, 0.15 * bh, 0.35 * bh);
  const hairN = left.n + right.n;
  const hair: [number, number, number] | null = hairN
    ? [0, 1, 2].map((k) => (left.rgb[k] * left.n + right.rgb[k] * right.n) / hairN) as [number, number, number]
    : null;
  const distanceToSkin = chromaDistance(top.rgb, skin.rgb);
  const distanceToHair = hair ? chromaDistance(top.rgb, hair) : null;
  const t = HEAD_EXTENT.HEADWEAR_MIN_DISTANCE;
  const detected = top.n > 0 && distanceToSkin > t && (distanceToHair === null || distanceToHair > t);
  const r3 = (v: number): number => Math.round(v * 1000) / 1000;
  return { detected, distanceToHair: distanceToHair === null ? null : r3(distanceToHair), distanceToSkin: r3(distanceToSkin) };
}
