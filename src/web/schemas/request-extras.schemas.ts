// Inputs read outside an ajv-validated schema, described here once for the OpenAPI document:
// the request-mode switches of services/request-mode.ts and the demo gate headers of
// services/demo-gate.ts.
/** `?async=true` (or `Prefer: respond-async`): 202 with a job status URL instead of waiting. */
export const requestModeQuery = {
  $id: 'RequestModeQuery',
  type: 'object',
  properties: {
    async: { type: 'string', enum: ['true', '1'], description: 'Answer 202 with `/jobs/{id}` at once instead of waiting for the job (same as `Prefer: respond-async`)' },
  },
};

export const requestModeHeaders = {
  $id: 'RequestModeHeaders',
  type: 'object',
  properties: {
    Prefer: { type: 'string', description: '`respond-async`: answer 202 with a job status URL (as `?async=true`)' },
    'X-Pictor-Priority': { type: 'string', enum: ['interactive', 'bulk'], description: 'bulk jobs queue behind interactive ones (async requests default to bulk)' },
  },
};

/** Demo routes: allowed with X-Demo-Token = DEMO_TOKEN, or Origin/Referer in DEMO_ORIGINS. */
export const demoHeaders = {
  $id: 'DemoHeaders',
  type: 'object',
  properties: {
    'X-Demo-Token': { type: 'string', description: 'Demo token (DEMO_TOKEN)' },
    origin: { type: 'string', description: 'Origin of a page in DEMO_ORIGINS (sent by browsers)' },
    referer: { type: 'string', description: 'Referer of a page in DEMO_ORIGINS (sent by browsers)' },
  },
};
