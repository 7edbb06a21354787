#!/usr/bin/env bash
# Rebuilds test/fixtures/corpus from public-domain and CC0 images shipped in Debian packages
# (see test/fixtures/corpus/SOURCES.md). A maintainer tool: the corpus is committed, so neither
# tests nor CI run this. Needs apt access, jpegtran (libjpeg-turbo-progs) and node_modules.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=test/fixtures/corpus
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && apt-get download python3-skimage python-matplotlib-data >/dev/null 2>&1)
for deb in "$work"/*.deb; do dpkg-deb -x "$deb" "$work/x"; done
sk="$work/x/usr/lib/python3/dist-packages/skimage/data"
mpl=$(dirname "$(find "$work/x" -name grace_hopper.jpg | head -1)")
mkdir -p "$out/photos" "$out/faces"
cp "$sk/astronaut.png" "$out/faces/01_astronaut_collins.png"
cp "$mpl/grace_hopper.jpg" "$out/faces/02_grace_hopper.jpg"
cp "$sk/camera.png" "$out/faces/03_cameraman_gray.png"
# Photos at phone/camera size: upscaled (Lanczos) to 2560 px on the long side, light grain (±2 levels) so the
# encoders see texture as in a real photo, sRGB-tagged, one progressive, one baseline with restart
# markers (jpegtran), the rest baseline 4:2:0 as cameras write them.
SK="$sk" OUT="$out/photos" node --input-type=module -e '
import sharp from "sharp";
const { SK, OUT } = process.env;
const photos = [
  ["chelsea.png", "Chelsea.jpg", {}],
  ["coffee.png", "Coffee.jpg", { progressive: true }],
  ["rocket.jpg", "Rocket.jpg", {}],
  ["clock_motion.png", "Clock.jpg", {}],
  ["retina.jpg", "Retina.jpg", {}],
  ["moon.png", "Moon.jpg", {}],
];
for (const [src, name, jpegOptions] of photos) {
  const meta = await sharp(`${SK}/${src}`).metadata();
  const scale = 2560 / Math.max(meta.width, meta.height);
  const width = Math.round(meta.width * scale), height = Math.round(meta.height * scale);
  const base = await sharp(`${SK}/${src}`).removeAlpha().toColourspace("srgb").resize(width, height, { kernel: "lanczos3" }).raw().toBuffer();
  let seed = 12345;
  for (let i = 0; i < base.length; i++) {
    seed = (seed * 1103515245 + 12345) >>> 0;
    base[i] = Math.max(0, Math.min(255, base[i] + ((seed >>> 24) % 5) - 2));
  }
  await sharp(base, { raw: { width, height, channels: 3 } }).withIccProfile("srgb").jpeg({ quality: 88, ...jpegOptions }).toFile(`${OUT}/${name}`);
}
'
jpegtran -copy all -restart 8 -outfile "$work/r.jpg" "$out/photos/Rocket.jpg" && mv "$work/r.jpg" "$out/photos/Rocket.jpg"
ls -la "$out/photos" "$out/faces"
# A camera-style JPEG with EXIF: Grace Hopper stored sideways (turned 90° anticlockwise, so EXIF
# orientation 6 shows her upright), with camera make/model, a taken-at time and GPS written by
# exiftool (libimage-exiftool-perl): the image-info and metadata-stripping tests read it.
mkdir -p "$out/exif"
exif="$out/exif/grace_hopper_gps_orientation6.jpg"
node --input-type=module -e '
import sharp from "sharp";
await sharp(process.argv[1]).rotate(270).jpeg({ quality: 90 }).toFile(process.argv[2]);
' "$out/faces/02_grace_hopper.jpg" "$exif"
exiftool -q -overwrite_original -n -Orientation=6 -Make=Canon -Model="Canon EOS 5D Mark IV" \
  -DateTimeOriginal="2024:05:06 07:08:09" -GPSLatitude=48.8584 -GPSLatitudeRef=N \
  -GPSLongitude=2.2945 -GPSLongitudeRef=E "$exif"
