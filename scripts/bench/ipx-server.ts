// ipx (unjs/ipx, the sharp-based server behind Nuxt Image) over the same source files, as
// `ipx serve` builds it: createIPX + ipxFSStorage + createIPXNodeServer. ipx brings its own sharp.
// Encoder settings are aligned with the service's for a fair comparison: ipx calls
// `toFormat(format, { quality })`, so WebP effort is sharp's default (4) unless set through
// sharpOptions (copied onto sharp's options by ipx), and JPEG is progressive by ipx's default.
// env: PORT, PHOTOS_DIR, IPX_WEBP_EFFORT (default 3 = the service's WEBP_EFFORT default),
//      IPX_JPEG_PROGRESSIVE (default false, as the service's non-`opt` JPEG).
import { createIPX, createIPXNodeServer, ipxFSStorage } from 'ipx';
import http from 'node:http';
import path from 'node:path';

const webpEffort = Number(process.env.IPX_WEBP_EFFORT ?? 3);
const jpegProgressive = process.env.IPX_JPEG_PROGRESSIVE === 'true';
const ipx = createIPX({
  storage: ipxFSStorage({ dir: path.resolve(process.env.PHOTOS_DIR ?? '.') }),
  sharpOptions: { jpegProgressive, webpEffort } as Record<string, unknown>,
});
const server = http.createServer(createIPXNodeServer(ipx));
server.keepAliveTimeout = 65_000;
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => process.send?.({ type: 'listening' }));
process.on('SIGTERM', () => process.exit(0));
