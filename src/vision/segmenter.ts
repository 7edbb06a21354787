// Person segmentation with tasks-vision ImageSegmenter and the legacy selfie model (256x256 input).
import { getSegmenter } from './mediapipe/runtime.js';
import { toImageData } from './mediapipe/polyfills.js';
import { type RawImage } from './raw-image.js';

/** Person probability per pixel (0..1), at the size of the image passed in. */
export async function segmentPerson(img: RawImage): Promise<Float32Array> {
  if (img.channels !== 4) throw new Error('segmentPerson expects RGBA');
  const segmenter = await getSegmenter();
  const result = segmenter.segment(toImageData(img.data, img.width, img.height));
  try {
    const mask = result.confidenceMasks?.[0];
    if (!mask) throw new Error('segmenter returned no confidence mask');
    if (mask.width !== img.width || mask.height !== img.height) {
      throw new Error(`segmenter mask is ${mask.width}x${mask.height}, expected ${img.width}x${img.height}`);
    }
    return mask.getAsFloat32Array().slice(); // own the data: the result is closed below
  } finally {
    result.close();
  }
}
