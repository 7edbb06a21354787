// Passport routes: GET /passport-photo/specs, GET (from a URL) and POST (upload) /passport-photo/demo/process.
import type { Request, Response } from 'express';
import { randomUUID } from 'node:crypto';
import { ServiceError } from '../../errors.js';
import { QUEUE_NAMES, type PassportJobResult } from '../../jobs/job-contract.js';
import { SafeFetchError, safeFetch } from '../../net/safe-fetch.js';
import { PASSPORT_COUNTRIES, PASSPORT_SPECS } from '../../passport/specs.js';
import { acceptsMime } from '../../imaging/params.js';
import { checkFields, inputOf, type InputOf } from '../middleware/validate.js';
import { passportUploadFields, passportUploadInputs, passportUrlInputs } from '../schemas/passport.schemas.js';
import { assertDemoAllowed } from '../services/demo-gate.js';
import { sniffImageType } from '../services/sniff-image.js';
import { parseBaseImageUrl } from '../services/transform-service.js';
import { receiveUpload } from '../services/upload-receiver.js';
import { validationError } from '../validation.js';
import type { WebDeps } from '../web-deps.js';

/** The spec's default country, for both demo routes (ajv validates but does not fill defaults here). */
const DEFAULT_COUNTRY = passportUploadFields.properties.country.default;

/** The options both demo routes take (the GET's query adds `src`). */
type PassportParams = InputOf<typeof passportUploadFields>;

export function passportSpecsController() {
  return (_req: Request, res: Response) => {
    res.setHeader('Cache-Control', 'public, max-age=3600');
    res.json({ countries: PASSPORT_COUNTRIES, specs: PASSPORT_SPECS });
  };
}

/** All four face-box values, or none; partial boxes are a 422 naming the missing fields. */
function faceBoxOf(p: PassportParams) {
  const names = ['face_x', 'face_y', 'face_width', 'face_height'] as const;
  const given = names.filter((n) => p[n] !== undefined);
  if (given.length === 0) return null;
  if (given.length < 4) {
    throw validationError(names.filter((n) => p[n] === undefined).map((n) => ({ loc: ['query', n], msg: 'face_x, face_y, face_width and face_height must be given together', type: 'missing' })));
  }
  const box = { x: p.face_x!, y: p.face_y!, width: p.face_width!, height: p.face_height! };
  if (box.width <= 0 || box.height <= 0 || box.x + box.width > 1 || box.y + box.height > 1) {
    throw validationError([{ loc: ['query', 'face_width'], msg: 'the face box must have a positive size and lie inside the image (x + width ≤ 1, y + height ≤ 1)', type: 'value_error' }]);
  }
  return box;
}

async function runPassport(deps: WebDeps, req: Request, res: Response, stagingKey: string, params: PassportParams): Promise<void> {
  const requestId = randomUUID();
  let result: PassportJobResult;
  try {
    result = await deps.jobs.run(
      QUEUE_NAMES.passport,
      {
        requestId,
        stagingKey,
        country: params.country ?? DEFAULT_COUNTRY,
        removeBackground: params.remove_bg ?? true,
        enhance: params.enhance ?? true,
        includePrintSheet: params.include_print_sheet ?? false,
        faceBox: faceBoxOf(params),
      },
      { jobId: `pp-${requestId}` },
    );
  } finally {
    await deps.storage.delete(stagingKey).catch(() => undefined);
  }
  try {
    const photo = await deps.storage.read(result.photoKey);
    const accept = req.headers.accept ?? '';
    if (acceptsMime(accept, 'image/jpeg') && !acceptsMime(accept, 'application/json')) {
      res.setHeader('Content-Type', 'image/jpeg');
      res.setHeader('Cache-Control', 'no-store');
      res.send(photo);
      return;
    }
    const sheet = result.printSheetKey ? await deps.storage.read(result.printSheetKey) : null;
    const report = result.report as Record<string, unknown> & { photo: Record<string, unknown>; print_sheet: Record<string, unknown> | null };
    const { timings: _timings, photo: photoInfo, print_sheet: sheetInfo, ...rest } = report;
    res.setHeader('Cache-Control', 'no-store');
    res.json({
      success: true,
      ...rest,
      photo: { data_url: `data:image/jpeg;base64,${photo.toString('base64')}`, ...photoInfo },
      print_sheet: sheet && sheetInfo ? { data_url: `data:image/jpeg;base64,${sheet.toString('base64')}`, ...sheetInfo } : null,
    });
  } finally {
    await deps.storage.delete(result.photoKey).catch(() => undefined);
    if (result.printSheetKey) await deps.storage.delete(result.printSheetKey).catch(() => undefined);
  }
}

/** Reads a source URL: this service's own images straight from storage, anything else SSRF-safely. */
async function fetchSource(deps: WebDeps, src: string): Promise<Buffer> {
  const own = parseBaseImageUrl(src, deps.config.cdnUrl);
  if (own) {
    const image = await deps.images.byRef(own.userId, own.publicId);
    if (!image) throw new ServiceError('not_found', 'Image not found');
    return deps.storage.read(image.storageKey);
  }
  try {
    const fetched = await safeFetch(src, { maxBytes: deps.config.maxUploadBytes, allowedContentTypes: ['image/'], connectTimeoutMs: 5000, totalTimeoutMs: 15000 });
    return fetched.buffer;
  } catch (err) {
    if (err instanceof SafeFetchError) {
      const kind = err.status === 413 ? 'too_large' : err.status === 415 ? 'unsupported_type' : err.status === 504 ? 'timeout' : 'bad_request';
      throw new ServiceError(kind, `Could not fetch src: ${err.message}`);
    }
    throw err;
  }
}

export function passportFromUrlController(deps: WebDeps) {
  return async (req: Request, res: Response) => {
    assertDemoAllowed(deps.config, req);
    const params = inputOf(res, passportUrlInputs).query;
    faceBoxOf(params); // validate before fetching anything
    const bytes = await fetchSource(deps, params.src);
    await sniffImageType(bytes);
    const stagingKey = `_staging/${randomUUID()}`;
    await deps.storage.put(stagingKey, bytes, { contentType: 'application/octet-stream', durable: false });
    await runPassport(deps, req, res, stagingKey, params);
  };
}

export function passportUploadController(deps: WebDeps) {
  return async (req: Request, res: Response) => {
    assertDemoAllowed(deps.config, req);
    // Answered only after the job (no async mode): the staged photo need not reach the disk.
    const received = await receiveUpload(req, res, deps.storage, { maxBytes: deps.config.maxUploadBytes, durable: false });
    let params: PassportParams;
    try {
      params = checkFields(passportUploadInputs, received.fields);
      faceBoxOf(params);
    } catch (err) {
      await deps.storage.delete(received.stagingKey).catch(() => undefined);
      throw err;
    }
    await runPassport(deps, req, res, received.stagingKey, params);
  };
}
