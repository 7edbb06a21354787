// Uploads: POST /upload (set A, optional `public_id` in the query) and POST /cdn/upload (into a
// project, from the `project` form field). Both run services/upload-service.ts.
import type { Request, Response } from 'express';
import { resolveProjectForUpload } from '../../catalog/projects.js';
import { currentUser } from '../middleware/auth.js';
import { checkFields, inputOf } from '../middleware/validate.js';
import { cdnUploadInputs, uploadInputs } from '../schemas/upload.schemas.js';
import { handleUpload } from '../services/upload-service.js';
import type { WebDeps } from '../web-deps.js';

export function uploadController(deps: WebDeps) {
  return async (req: Request, res: Response) => {
    const user = currentUser(res);
    // `public_id=` is a bad id (400), not "no id": the query check drops empty values as not given.
    const publicId = req.query.public_id === '' ? '' : inputOf(res, uploadInputs).query.public_id;
    await handleUpload(deps, req, res, user, { api: 'A', publicId });
  };
}

export function cdnUploadController(deps: WebDeps) {
  return async (req: Request, res: Response) => {
    const user = currentUser(res);
    await handleUpload(deps, req, res, user, {
      api: 'B',
      resolveProject: async (fields) => {
        const project = await resolveProjectForUpload(deps.catalog, user.userId, checkFields(cdnUploadInputs, fields).project);
        return { id: String(project._id), slug: project.slug };
      },
    });
  };
}
