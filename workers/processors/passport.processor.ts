// passport: MediaPipe face detection + segmentation, spec crop, background, print sheet and
// compliance report. Models load once per process (lazily, on the first job or at warm-up).
import type { Job } from 'bullmq';
import { ServiceError } from '../../src/errors.js';
import type { PassportJobData, PassportJobResult } from '../../src/jobs/job-contract.js';
import { isPassportCountry, PassportInputError, processPassportPhoto } from '../../src/passport/index.js';
import { readIfPresent } from '../../src/storage/storage.js';
import type { ProcessorContext } from './processor-context.js';

export function passportOutputPrefix(requestId: string): string {
  return `_passport/${requestId}/`;
}

function toServiceError(err: PassportInputError): ServiceError {
  if (err.code === 'undecodable_image') return new ServiceError('unsupported_type', err.message);
  if (err.code === 'image_too_large') return new ServiceError('too_large', err.message);
  return new ServiceError('invalid_parameter', err.message);
}

export function passportProcessor(ctx: ProcessorContext) {
  return async (job: Job<PassportJobData, PassportJobResult>): Promise<PassportJobResult> => {
    const data = job.data;
    if (!isPassportCountry(data.country)) throw new ServiceError('invalid_parameter', `Unknown country "${data.country}"`);
    const input = await readIfPresent(ctx.storage, data.stagingKey);
    if (!input) throw new ServiceError('bad_request', 'The staged photo is gone; please send it again');
    let result;
    try {
      result = await processPassportPhoto(input, {
        country: data.country,
        removeBackground: data.removeBackground,
        enhance: data.enhance,
        includePrintSheet: data.includePrintSheet,
        faceBox: data.faceBox,
      });
    } catch (err) {
      if (err instanceof PassportInputError) throw toServiceError(err);
      throw err;
    }
    const prefix = passportOutputPrefix(data.requestId);
    const photoKey = `${prefix}photo.jpg`;
    await ctx.storage.put(photoKey, result.photo.buffer, { contentType: 'image/jpeg' });
    let printSheetKey: string | null = null;
    if (result.printSheet) {
      printSheetKey = `${prefix}print-sheet.jpg`;
      await ctx.storage.put(printSheetKey, result.printSheet.buffer, { contentType: 'image/jpeg' });
    }
    await ctx.storage.delete(data.stagingKey);
    const { photo, printSheet, ...rest } = result;
    return {
      photoKey,
      printSheetKey,
      report: {
        ...rest,
        photo: { width: photo.width, height: photo.height, bytes: photo.bytes, dpi: photo.dpi, format: photo.format, quality: photo.quality },
        print_sheet: printSheet ? { width: printSheet.width, height: printSheet.height, copies: printSheet.copies, dpi: printSheet.dpi } : null,
      },
    };
  };
}
