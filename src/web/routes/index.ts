// Every route of the front door, in mount order: the app mounts these tables and the OpenAPI
// document walks them. Order matters (fixed paths before `/image/*path` and `/cdn/:image_id`;
// the dashboard last).
import { dashboardRouteTable } from './dashboard.routes.js';
import { docsRouteTable } from './docs.routes.js';
import { filesRouteTable } from './files.routes.js';
import { imageInfoRouteTable } from './image-info.routes.js';
import { jobsRouteTable } from './jobs.routes.js';
import { monitoringRouteTable } from './monitoring.routes.js';
import { passportRouteTable } from './passport.routes.js';
import type { RouteOptions, RouteTable } from './route-table.js';
import { setARouteTable } from './set-a.routes.js';
import { setBRouteTable } from './set-b.routes.js';
import { statusRouteTable } from './status.routes.js';

export function routeTables(options: RouteOptions): RouteTable[] {
  return [
    statusRouteTable(),
    setARouteTable(),
    imageInfoRouteTable(),
    setBRouteTable(),
    passportRouteTable(),
    jobsRouteTable(),
    docsRouteTable(),
    monitoringRouteTable(options),
    filesRouteTable(options),
    dashboardRouteTable(),
  ];
}
