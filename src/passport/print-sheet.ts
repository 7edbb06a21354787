// 4 x 6 in print sheet at 300 DPI (1800 x 1200 px): as many copies as fit, centred, with thin cut
// lines around every copy; DPI written into the JPEG.
import sharp from 'sharp';
import { printCopySizePx, printSheetTiling, type PassportSpec } from './specs.js';
import { type RawImage } from '../vision/raw-image.js';

/** Cut lines: 1 px, mid grey (visible on white and on photo edges, unobtrusive when cut along). */
export const CUT_LINE = { width: 1, rgb: [128, 128, 128] as const };
export const PRINT_SHEET_JPEG_QUALITY = 92;

export interface PrintSheet {
  buffer: Buffer;
  width: number;
  height: number;
  copies: number;
  columns: number;
  rows: number;
  dpi: number;
  /** Top-left corner of each copy on the sheet. */
  positions: Array<{ x: number; y: number }>;
  copyWidth: number;
  copyHeight: number;
}

export async function makePrintSheet(photo: RawImage, spec: PassportSpec): Promise<PrintSheet> {
  const sheet = spec.printSheet;
  const { width: cw, height: ch } = printCopySizePx(spec);
  const { columns, rows, copies } = printSheetTiling(spec);
  const W = sheet.widthPx;
  const H = sheet.heightPx;
  const copy =
    photo.width === cw && photo.height === ch
      ? photo.data
      : new Uint8Array(
          await sharp(photo.data, { raw: { width: photo.width, height: photo.height, channels: 3 } })
            .resize(cw, ch, { fit: 'fill', kernel: 'lanczos3' })
            .raw()
            .toBuffer(),
        );
  const out = new Uint8Array(W * H * 3).fill(255);
  const gridW = columns * cw + (columns - 1) * sheet.gapPx;
  const gridH = rows * ch + (rows - 1) * sheet.gapPx;
  const left = Math.floor((W - gridW) / 2);
  const top = Math.floor((H - gridH) / 2);
  const positions: Array<{ x: number; y: number }> = [];
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < columns; c++) {
      const x = left + c * (cw + sheet.gapPx);
      const y = top + r * (ch + sheet.gapPx);
      positions.push({ x, y });
      for (let yy = 0; yy < ch; yy++) {
        const src = yy * cw * 3;
        out.set(copy.subarray(src, src + cw * 3), ((y + yy) * W + x) * 3);
      }
    }
  }
  if (sheet.cutLines) {
    const [lr, lg, lb] = CUT_LINE.rgb;
    const px = (x: number, y: number): void => {
      if (x < 0 || y < 0 || x >= W || y >= H) return;
      const o = (y * W + x) * 3;
      out[o] = lr;
      out[o + 1] = lg;
      out[o + 2] = lb;
    };
    // Every copy gets a frame on its own outline (shared edges coincide when the gap is 0).
    for (const { x, y } of positions) {
      for (let t = 0; t < CUT_LINE.width; t++) {
        for (let i = 0; i < cw; i++) {
          px(x + i, y + t);
          px(x + i, y + ch - 1 - t);
        }
        for (let j = 0; j < ch; j++) {
          px(x + t, y + j);
          px(x + cw - 1 - t, y + j);
        }
      }
    }
  }
  const buffer = await sharp(out, { raw: { width: W, height: H, channels: 3 } })
    .jpeg({ quality: PRINT_SHEET_JPEG_QUALITY, chromaSubsampling: '4:4:4' })
    .withIccProfile('srgb')
    .withDensity(sheet.dpi)
    .toBuffer();
  return { buffer, width: W, height: H, copies, columns, rows, dpi: sheet.dpi, positions, copyWidth: cw, copyHeight: ch };
}
