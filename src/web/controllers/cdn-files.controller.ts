// The front door serves stored objects at CDN_URL's path, so every public URL it hands out
// resolves: always with local storage, and with GCS while CDN_URL is on this service (in
// production CDN_URL points at the bucket or a CDN in front of it, and this route is not mounted).
import type { Request, Response } from 'express';
import { ServiceError } from '../../errors.js';
import { isDerivativeKey } from '../../imaging/params.js';
import { assertSafeKey } from '../../storage/storage.js';
import { dependOn, expectHit } from '../services/hit-memo.js';
import { sendStoredImage } from '../services/image-responder.js';
import { revalidatedCacheControl } from '../services/transform-service.js';
import type { WebDeps } from '../web-deps.js';

export function cdnFilesController(deps: WebDeps, mountPath: string) {
  return async (req: Request, res: Response) => {
    let key: string;
    try {
      key = req.path.slice(mountPath.length + 1).split('/').map(decodeURIComponent).join('/');
      assertSafeKey(key);
    } catch {
      throw new ServiceError('not_found', 'Not found');
    }
    if (key.startsWith('_')) throw new ServiceError('not_found', 'Not found'); // internal prefixes (_staging, _passport)
    const isDerivative = isDerivativeKey(key);
    // Only derivatives are answered from memory (and so kept for the hit path); their bytes never
    // change, and they are deleted only with their image, which every image change reports.
    expectHit(res);
    const noImageChanged = deps.images.unchanged(); // from now: a change while this request runs counts
    dependOn(res, () => noImageChanged);
    await sendStoredImage(deps, req, res, key, {
      ownerId: key.split('/')[0],
      // Derivative keys change whenever the original does, so they are immutable; originals can be replaced.
      cacheControl: isDerivative ? 'public, max-age=31536000, immutable' : revalidatedCacheControl(deps),
    });
  };
}
