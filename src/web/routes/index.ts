// Every route of the front door, in mount order: the app mounts these tables and the OpenAPI
// document walks them. One table per resource; order matters (fixed paths before `/image/*path`
// and `/cdn/:image_id`; the dashboard last).
import { cdnServeRouteTable } from './cdn-serve.routes.js';
import { dashboardRouteTable } from './dashboard.routes.js';
import { docsRouteTable } from './docs.routes.js';
import { filesRouteTable } from './files.routes.js';
import { imageInfoRouteTable } from './image-info.routes.js';
import { imagesRouteTable } from './images.routes.js';
import { jobsRouteTable } from './jobs.routes.js';
import { monitoringRouteTable } from './monitoring.routes.js';
import { passportRouteTable } from './passport.routes.js';
import { projectsRouteTable } from './projects.routes.js';
import type { RouteOptions, RouteTable } from './route-table.js';
import { srcsetRouteTable } from './srcset.routes.js';
import { statusRouteTable } from './status.routes.js';
import { transformRouteTable } from './transform.routes.js';
import { uploadRouteTable } from './upload.routes.js';

export function routeTables(options: RouteOptions): RouteTable[] {
  return [
    statusRouteTable(),
    uploadRouteTable(),
    srcsetRouteTable(),
    projectsRouteTable(),
    imagesRouteTable(),
    imageInfoRouteTable(),
    transformRouteTable(),
    cdnServeRouteTable(),
    passportRouteTable(),
    jobsRouteTable(),
    docsRouteTable(),
    monitoringRouteTable(options),
    filesRouteTable(options),
    dashboardRouteTable(),
  ];
}
