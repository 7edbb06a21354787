// Is an embedded ICC profile an sRGB one? Decided by what makes it sRGB, its primaries (the
// rXYZ/gXYZ/bXYZ tags, D50-adapted as ICC requires), not by its name. Lets the pipeline skip a
// per-pixel colour transform from sRGB to sRGB (~20 % of an 800 px WebP render's CPU, ~40 % of a
// JPEG one: scripts/bench-colour.ts).

/** sRGB's red, green and blue colorants adapted to D50 (IEC 61966-2-1 / ICC sRGB profiles). */
const SRGB_COLORANTS: Record<string, [number, number, number]> = {
  rXYZ: [0.4361, 0.2225, 0.0139],
  gXYZ: [0.3851, 0.7169, 0.0971],
  bXYZ: [0.1431, 0.0606, 0.7141],
};
const TOLERANCE = 0.003;

function s15Fixed16(icc: Buffer, offset: number): number {
  return icc.readInt32BE(offset) / 65536;
}

/** A red tone curve that is linear or a plain gamma far from sRGB's ~2.2 (e.g. "linear sRGB"). */
function linearOrOddGamma(icc: Buffer, count: number): boolean {
  for (let i = 0; i < count; i++) {
    const entry = 132 + i * 12;
    if (icc.toString('latin1', entry, entry + 4) !== 'rTRC') continue;
    const offset = icc.readUInt32BE(entry + 4);
    if (icc.toString('latin1', offset, offset + 4) !== 'curv') return false; // parametric: trust the primaries
    const points = icc.readUInt32BE(offset + 8);
    if (points === 0) return true;
    if (points === 1) {
      const gamma = icc.readUInt16BE(offset + 12) / 256;
      return gamma < 2.0 || gamma > 2.6;
    }
    return false;
  }
  return false;
}

/** True for an RGB profile with sRGB's primaries and an sRGB-like tone curve. */
export function hasSrgbPrimaries(icc: Buffer): boolean {
  try {
    if (icc.length < 132 || icc.toString('latin1', 16, 20) !== 'RGB ' || icc.toString('latin1', 36, 40) !== 'acsp') return false;
    const count = icc.readUInt32BE(128);
    if (count > 200 || icc.length < 132 + count * 12) return false;
    const found = new Set<string>();
    for (let i = 0; i < count; i++) {
      const entry = 132 + i * 12;
      const signature = icc.toString('latin1', entry, entry + 4);
      const expected = SRGB_COLORANTS[signature];
      if (!expected) continue;
      const offset = icc.readUInt32BE(entry + 4);
      if (offset + 20 > icc.length || icc.toString('latin1', offset, offset + 4) !== 'XYZ ') return false;
      const xyz = [s15Fixed16(icc, offset + 8), s15Fixed16(icc, offset + 12), s15Fixed16(icc, offset + 16)];
      if (xyz.some((v, k) => Math.abs(v - expected[k]) > TOLERANCE)) return false;
      found.add(signature);
    }
    return found.size === 3 && !linearOrOddGamma(icc, count);
  } catch {
    return false;
  }
}
