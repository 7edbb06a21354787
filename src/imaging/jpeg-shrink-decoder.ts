// Decodes a JPEG at a libjpeg shrink-on-load factor (1, 2, 4 or 8) into raw pixels, through the
// libvips that sharp loaded. sharp has no call for this: it shrinks on load only inside a resize,
// so its decoded pixels at 1/2 are never visible. The decoded-source cache needs exactly those
// pixels (the ones sharp's own resize starts from), so this calls libvips' C API through koffi:
// the header read (jpegload_buffer, lazy) on the calling thread, the decode
// (vips_image_write_to_memory) on koffi's worker thread, as sharp runs libvips off the event loop.
import fs from 'node:fs';
import koffi from 'koffi';
import sharp from 'sharp';
import type { DecodedSource } from './transform-param.js';
import { uncompressedRgbTiff } from './uncompressed-tiff.js';

/** libvips' VipsFailOn: fail on decoder errors (sharp's failOn 'error'). */
const FAIL_ON_ERROR = 2;
/** libvips' VipsAccess: decode top to bottom into the output (random access decodes to a buffer first). */
const ACCESS_SEQUENTIAL = 1;

interface LibvipsCalls {
  jpegload(input: Buffer, length: number, out: [unknown], ...options: unknown[]): number;
  orientation(image: unknown): number;
  width(image: unknown): number;
  height(image: unknown): number;
  bands(image: unknown): number;
  xres(image: unknown): number;
  yres(image: unknown): number;
  writeToMemory: { async(image: unknown, size: [number], done: (err: unknown, pixels: unknown) => void): void };
  unref(object: unknown): void;
  free(pointer: unknown): void;
  clearError(): void;
}

/** The libvips shared library this process loaded for sharp (Linux: read from /proc/self/maps). */
function loadedLibvips(): string | undefined {
  // sharp's binding, and with it libvips, is loaded before the maps are read.
  if (!sharp.versions.vips) return undefined;
  let maps: string;
  try {
    maps = fs.readFileSync('/proc/self/maps', 'utf8');
  } catch {
    return undefined;
  }
  const paths = maps.split('\n').map((line) => line.slice(line.indexOf('/'))).filter((p) => p.startsWith('/'));
  // sharp's prebuilt libvips is one library (libvips-cpp); a system libvips keeps its C API in libvips.so.
  return paths.find((p) => /\/libvips\.so[.\d]*$/.test(p)) ?? paths.find((p) => /\/libvips-cpp\.so[.\d]*$/.test(p));
}

let calls: LibvipsCalls | null | undefined;

function libvips(): LibvipsCalls | null {
  if (calls !== undefined) return calls;
  calls = null;
  const path = loadedLibvips();
  if (!path) return calls;
  try {
    const lib = koffi.load(path);
    calls = {
      jpegload: lib.func('int vips_jpegload_buffer(void *buf, size_t len, _Out_ void **out, ...)') as LibvipsCalls['jpegload'],
      orientation: lib.func('int vips_image_get_orientation(void *image)'),
      width: lib.func('int vips_image_get_width(void *image)'),
      height: lib.func('int vips_image_get_height(void *image)'),
      bands: lib.func('int vips_image_get_bands(void *image)'),
      xres: lib.func('double vips_image_get_xres(void *image)'),
      yres: lib.func('double vips_image_get_yres(void *image)'),
      writeToMemory: lib.func('void *vips_image_write_to_memory(void *image, _Out_ size_t *size)') as unknown as LibvipsCalls['writeToMemory'],
      unref: lib.func('void g_object_unref(void *object)'),
      free: lib.func('void g_free(void *pointer)'),
      clearError: lib.func('void vips_error_clear(void)'),
    };
  } catch {
    calls = null;
  }
  return calls;
}

/** Whether this process can decode at a shrink factor (libvips' C API found and bound). */
export function canDecodeJpegAtShrink(): boolean {
  return libvips() !== null;
}

/**
 * The JPEG's pixels at 1/shrink, as sharp's resize would decode them (as an uncompressed TIFF),
 * and its density; undefined when libvips cannot be called, the JPEG does not decode cleanly, or
 * its pixels are not 3-band 8-bit with no EXIF rotation (the caller renders those the normal way,
 * which reports any error).
 */
export async function decodeJpegAtShrink(input: Buffer, shrink: number): Promise<DecodedSource | undefined> {
  const vips = libvips();
  if (!vips) return undefined;
  const out: [unknown] = [null];
  if (vips.jpegload(input, input.length, out, 'str', 'shrink', 'int', shrink, 'str', 'fail_on', 'int', FAIL_ON_ERROR, 'str', 'access', 'int', ACCESS_SEQUENTIAL, 'void *', null) !== 0) {
    vips.clearError();
    return undefined;
  }
  const image = out[0];
  try {
    // One density for both axes: sharp can set only that on the pixels (withMetadata's density).
    if (vips.orientation(image) > 1 || vips.bands(image) !== 3 || vips.xres(image) !== vips.yres(image)) return undefined;
    const density = vips.xres(image) * 25.4;
    const width = vips.width(image);
    const height = vips.height(image);
    const size: [number] = [0];
    const pixels = await new Promise<unknown>((resolve) =>
      vips.writeToMemory.async(image, size, (err, p) => {
        void input; // the loader reads `input` until here: this closure keeps it from the collector
        resolve(err ? null : p);
      }),
    );
    if (!pixels) {
      vips.clearError();
      return undefined;
    }
    if (size[0] !== width * height * 3) {
      vips.free(pixels);
      return undefined;
    }
    // Copied into the TIFF (the view alone would point at memory freed just below).
    const tiff = uncompressedRgbTiff(width, height, new Uint8Array(koffi.view(pixels, size[0])));
    vips.free(pixels);
    return { tiff, width, height, density };
  } finally {
    vips.unref(image);
  }
}
