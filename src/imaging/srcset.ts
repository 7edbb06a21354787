// The widths of a responsive srcset (GET /generate/srcset, the SDK, the dashboard): the spec's
// default list, and how many a request may name (each URL is a derivative a browser may ask for).
export const SRCSET_WIDTHS = {
  default: [400, 800, 1200],
  maxCount: 20,
} as const;
