// PictorClient: a typed client for Node (≥ 20) and browsers, on `fetch`. Signed URLs use the same
// canonical form and HMAC as the server (src/imaging/signing-core.ts, shared code), computed with
// WebCrypto so they work in browsers too.
import { DEFAULT_FORMAT, DEFAULT_QUALITY, MAX_SIDE, TRANSFORM_PARAMS } from '../imaging/params.js';
import { SRCSET_WIDTHS } from '../imaging/srcset.js';
import { assembleSignedUrl, signingQuery, signQueryWith, webCryptoHmacSha256, type HmacSha256 } from '../imaging/signing-core.js';
import { notesFromHeaders, type RenderNoteValues } from '../storage/derivative-metadata.js';
import { PictorApiError, PictorConfigError, PictorNetworkError } from './errors.js';
import type {
  DeleteImagesResult,
  DeleteProjectResult,
  ImagePage,
  ImageInfo,
  ImageParams,
  ImageRecord,
  KeyInfo,
  ListImagesOptions,
  PassportOptions,
  PassportResult,
  PassportSpecs,
  Plan,
  Project,
  SrcsetOptions,
  SrcsetResult,
  TransformParams,
  TransformResult,
  UploadInput,
  UploadOptions,
  UploadResult,
  Usage,
} from './types.js';

export interface PictorClientOptions {
  /** The service's base URL, e.g. `https://img.example.com` (BASE_URL of the deployment). */
  baseUrl: string;
  /** API key (`pk_…`), sent as `X-API-Key`. Needed by every method except plans, passport and URL builders. */
  apiKey?: string;
  /** Key id of the credential (`npm run keys -- list` shows it; it is also the `kid` of any srcset URL). For signing. */
  keyId?: string;
  /** API secret (`sk_…`). For signing URLs — keep it server-side; never ship it to browsers of other people. */
  secret?: string;
  /** `X-Demo-Token` for the passport demo (or call from an origin listed in DEMO_ORIGINS). */
  demoToken?: string;
  /** A fetch implementation (default: the global one). */
  fetch?: typeof fetch;
  /** HMAC-SHA256 used for signing (default: WebCrypto). Must return base64url. */
  hmac?: HmacSha256;
  /** Abort each request after this many milliseconds (default: no limit). */
  timeoutMs?: number;
  /** Extra headers for every request. */
  headers?: Record<string, string>;
}

type Query = Record<string, string | number | boolean | undefined | null>;

interface CallOptions {
  query?: Query;
  json?: unknown;
  body?: BodyInit;
  auth?: boolean;
  headers?: Record<string, string>;
}

const SIGNABLE = new Set(['src', ...TRANSFORM_PARAMS.map((p) => p.name), 'exp']);
const SET_A_PARAMS = TRANSFORM_PARAMS.filter((p) => (p.sets as readonly string[]).includes('A')).map((p) => p.name as string);
const SET_B_PARAMS = TRANSFORM_PARAMS.filter((p) => (p.sets as readonly string[]).includes('B')).map((p) => p.name as string);

/** Transform parameters in registry (canonical) order; unknown names are a programming error. */
function orderedParams(params: object, allowed: readonly string[]): [string, string][] {
  const given = params as Record<string, unknown>;
  for (const name of Object.keys(given)) {
    if (!allowed.includes(name)) throw new TypeError(`Unknown transform parameter "${name}" (allowed: ${allowed.join(', ')})`);
  }
  return allowed.filter((n) => given[n] !== undefined && given[n] !== null).map((n) => [n, String(given[n])]);
}

function queryString(query: Query | [string, string][]): string {
  const entries = Array.isArray(query) ? query : Object.entries(query).filter(([, v]) => v !== undefined && v !== null).map(([k, v]) => [k, String(v)]);
  return entries.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v as string)}`).join('&');
}

function isBlob(input: unknown): input is Blob {
  return typeof Blob !== 'undefined' && input instanceof Blob;
}

function toBlob(input: UploadInput, contentType?: string): Blob {
  if (isBlob(input)) return input;
  const view = input instanceof ArrayBuffer ? new Uint8Array(input) : new Uint8Array(input.buffer, input.byteOffset, input.byteLength);
  // Copied into a fresh ArrayBuffer: a Node Buffer may be a view into a larger shared pool.
  return new Blob([view.slice()], { type: contentType ?? 'application/octet-stream' });
}

function filenameOf(input: UploadInput, options: { filename?: string }): string {
  if (options.filename) return options.filename;
  const name = (input as { name?: unknown }).name;
  return typeof name === 'string' && name ? name : 'upload';
}

export class PictorClient {
  readonly baseUrl: string;
  private readonly options: PictorClientOptions;
  private readonly fetchImpl: typeof fetch;

  /** `images.list/delete/iterate`: the set B image listing. */
  readonly images: {
    list(options?: ListImagesOptions): Promise<ImagePage>;
    /** One id: `DELETE /cdn/{id}` (404 when missing). Several: `DELETE /cdn/images` (missing ones in `not_found`). */
    delete(ids: string | string[]): Promise<DeleteImagesResult>;
    /** Every image (newest first), following `next_cursor` page by page. */
    iterate(options?: { project?: string; pageSize?: number }): AsyncGenerator<ImageRecord, void, undefined>;
  };

  readonly projects: {
    list(): Promise<Project[]>;
    create(project: { name: string; description?: string | null }): Promise<Project>;
    update(projectId: string, changes: { name?: string | null; description?: string | null }): Promise<Project>;
    /** Without `moveImagesToDefault: true` the project's images are deleted with it (the spec's default). */
    delete(projectId: string, options?: { moveImagesToDefault?: boolean }): Promise<DeleteProjectResult>;
  };

  readonly passport: {
    /** Processes an uploaded photo (bytes/Blob) or one at a URL (`{src}`); JSON with data URLs. */
    process(input: UploadInput | { src: string }, options?: PassportOptions): Promise<PassportResult>;
    specs(): Promise<PassportSpecs>;
  };

  constructor(options: PictorClientOptions) {
    if (!options.baseUrl) throw new PictorConfigError('baseUrl is required');
    this.options = { ...options };
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    if (!options.fetch && typeof globalThis.fetch !== 'function') throw new PictorConfigError('No fetch implementation: pass options.fetch');
    // Bound: browsers throw "Illegal invocation" when window.fetch is called as a method of another object.
    this.fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);

    this.images = {
      list: (o = {}) => this.call<ImagePage>('GET', '/cdn/images', { query: { project: o.project, limit: o.limit, cursor: o.cursor } }),
      delete: async (ids) => {
        if (typeof ids === 'string') return this.call<DeleteImagesResult>('DELETE', `/cdn/${encodeURIComponent(ids)}`);
        return this.call<DeleteImagesResult>('DELETE', '/cdn/images', { json: { imageIds: ids } });
      },
      iterate: (o = {}) => this.iterateImages(o),
    };
    this.projects = {
      list: async () => (await this.call<{ projects: Project[] }>('GET', '/cdn/projects')).projects,
      create: (p) => this.call<Project>('POST', '/cdn/projects', { json: p }),
      update: (projectId, changes) => this.call<Project>('PATCH', '/cdn/projects', { json: { projectId, ...changes } }),
      delete: (projectId, o = {}) => this.call<DeleteProjectResult>('DELETE', '/cdn/projects', { json: { projectId, moveImagesToDefault: o.moveImagesToDefault ?? false } }),
    };
    this.passport = {
      process: (input, o = {}) => this.processPassport(input, o),
      specs: () => this.call<PassportSpecs>('GET', '/passport-photo/specs', { auth: false }),
    };
  }

  // ---- uploads -------------------------------------------------------------------------------

  /** Uploads an image (`POST /cdn/upload`); waits until it is stored and catalogued. */
  async upload(file: UploadInput, options: UploadOptions = {}): Promise<UploadResult> {
    const form = new FormData();
    // Fields first: the service reads them before the file streams in.
    if (options.publicId !== undefined) form.append('public_id', options.publicId);
    if (options.project !== undefined) form.append('project', options.project);
    form.append('file', toBlob(file, options.contentType), filenameOf(file, options));
    return this.call<UploadResult>('POST', '/cdn/upload', { body: form });
  }

  // ---- URLs ----------------------------------------------------------------------------------

  /** `{baseUrl}/transform?src=…&w=…` (unsigned: needs `X-API-Key`, answers JSON). */
  transformUrl(src: string, params: TransformParams = {}): string {
    return `${this.baseUrl}/transform?${queryString([['src', src], ...orderedParams(params, SET_A_PARAMS)])}`;
  }

  /**
   * A signed `/transform` URL that browsers can load without a key (answers the image bytes).
   * Needs `keyId` and `secret`; signs with WebCrypto (or `options.hmac`).
   */
  async signedTransformUrl(src: string, params: TransformParams = {}): Promise<string> {
    return this.sign(Object.fromEntries([['src', src], ...orderedParams(params, SET_A_PARAMS)]));
  }

  /** `{baseUrl}/image/{name}?src=…` (set B parameters; needs `X-API-Key`, answers bytes). */
  imageUrl(src: string, params: ImageParams = {}, name = 'image'): string {
    const path = name.split('/').map(encodeURIComponent).join('/');
    return `${this.baseUrl}/image/${path}?${queryString([['src', src], ...orderedParams(params, SET_B_PARAMS)])}`;
  }

  /**
   * `{baseUrl}/cdn/{imageId}?…`: the public, key-less address of an image (new sizes are capped per
   * image). Given an upload result or listing entry, the URL names its version (`v`): immutable,
   * and different after a replacement.
   */
  publicImageUrl(image: string | { imageId: string; version?: string }, params: ImageParams = {}): string {
    const id = typeof image === 'string' ? image : image.imageId;
    const version = typeof image === 'string' ? undefined : image.version;
    const qs = queryString(orderedParams(version && params.v === undefined ? { ...params, v: version } : params, SET_B_PARAMS));
    return `${this.baseUrl}/cdn/${encodeURIComponent(id)}${qs ? `?${qs}` : ''}`;
  }

  // ---- transforms ----------------------------------------------------------------------------

  /** `GET /transform` with the key: stores the derivative and returns its URL, size and type (JSON). */
  async transform(src: string, params: TransformParams = {}): Promise<TransformResult> {
    return this.call<TransformResult>('GET', '/transform', { query: Object.fromEntries([['src', src], ...orderedParams(params, SET_A_PARAMS)]) });
  }

  /** `GET /image/{name}` with the key: the transformed image itself. */
  async fetchImage(src: string, params: ImageParams = {}, options: { name?: string; accept?: string } = {}): Promise<Blob> {
    return (await this.fetchImageWithNotes(src, params, options)).blob;
  }

  /** As fetchImage, with what the render noted: the quality q=auto chose, remove_bg's `no-person`. */
  async fetchImageWithNotes(src: string, params: ImageParams = {}, options: { name?: string; accept?: string } = {}): Promise<{ blob: Blob; notes: RenderNoteValues }> {
    const res = await this.send('GET', this.imageUrl(src, params, options.name), { headers: { Accept: options.accept ?? 'image/avif,image/webp,image/*;q=0.8' } });
    return { blob: await res.blob(), notes: notesFromHeaders(res.headers) };
  }

  /** `GET /generate/srcset`: server-signed srcset, sizes and default URL. */
  async srcset(src: string, options: SrcsetOptions = {}): Promise<SrcsetResult> {
    return this.call<SrcsetResult>('GET', '/generate/srcset', {
      query: {
        src,
        w: options.widths === 'auto' ? 'auto' : options.widths?.join(','),
        f: options.f,
        q: options.q,
        sizes: options.sizes,
        ttl: options.ttl,
        min_w: options.min_w,
        max_w: options.max_w,
        bytes_step: options.bytes_step,
        max_images: options.max_images,
      },
    });
  }

  /**
   * The same srcset as `GET /generate/srcset`, signed here without a request (needs `keyId` and
   * `secret`). Identical to the server's answer for the same arguments.
   */
  async signedSrcset(src: string, options: SrcsetOptions = {}): Promise<SrcsetResult> {
    if (options.widths === 'auto') throw new RangeError("widths 'auto' are chosen by the server from the image's bytes: use srcset()");
    const widths = options.widths ?? SRCSET_WIDTHS.default;
    if (widths.length < 1 || widths.length > SRCSET_WIDTHS.maxCount || widths.some((w) => !Number.isInteger(w) || w < 1 || w > MAX_SIDE)) {
      throw new RangeError(`widths must be 1 to ${SRCSET_WIDTHS.maxCount} integers between 1 and ${MAX_SIDE}`);
    }
    const f = options.f ?? DEFAULT_FORMAT;
    const q = options.q ?? DEFAULT_QUALITY;
    const exp = options.ttl !== undefined ? Math.floor(Date.now() / 1000) + options.ttl : undefined;
    const urls = await Promise.all(
      widths.map((w) => this.sign({ src, w, f, q, ...(options.version ? { v: options.version } : {}), ...(exp !== undefined ? { exp } : {}) })),
    );
    const largest = Math.max(...widths);
    return {
      srcset: urls.map((u, i) => `${u} ${widths[i]}w`).join(', '),
      sizes: options.sizes ?? `(max-width: ${largest}px) 100vw, ${largest}px`,
      default: urls[Math.floor((widths.length - 1) / 2)],
    };
  }

  // ---- image info ----------------------------------------------------------------------------

  /** `GET /image/info?src=` with the key: size, format, colour, placeholders, faces, three EXIF fields, GPS presence. */
  async info(src: string): Promise<ImageInfo> {
    return this.call<ImageInfo>('GET', '/image/info', { query: { src } });
  }

  /** `GET /cdn/{imageId}/info`: the same, public (no key), as `/cdn/{imageId}` is. */
  async publicInfo(imageId: string): Promise<ImageInfo> {
    return this.call<ImageInfo>('GET', `/cdn/${encodeURIComponent(imageId)}/info`, { auth: false });
  }

  // ---- account -------------------------------------------------------------------------------

  /** `GET /image/test`: checks the key; its user and plan. */
  async verifyKey(): Promise<KeyInfo> {
    return this.call<KeyInfo>('GET', '/image/test');
  }

  async usage(): Promise<Usage> {
    return this.call<Usage>('GET', '/cdn/usage');
  }

  async plans(): Promise<Plan[]> {
    return (await this.call<{ plans: Plan[] }>('GET', '/plans', { auth: false })).plans;
  }

  // ---- internals -----------------------------------------------------------------------------

  private async sign(params: Record<string, string | number>): Promise<string> {
    const { keyId, secret } = this.options;
    if (!keyId || !secret) {
      throw new PictorConfigError('Signing needs keyId and secret in the client options (npm run keys -- list shows key ids; the kid= of a /generate/srcset URL is the same id)');
    }
    for (const name of Object.keys(params)) if (!SIGNABLE.has(name)) throw new TypeError(`"${name}" cannot be signed`);
    const query = signingQuery(params, keyId);
    return assembleSignedUrl(this.baseUrl, query, await signQueryWith(query, secret, this.options.hmac ?? webCryptoHmacSha256));
  }

  private async *iterateImages(o: { project?: string; pageSize?: number }): AsyncGenerator<ImageRecord, void, undefined> {
    let cursor: string | undefined;
    for (;;) {
      const page = await this.images.list({ project: o.project, limit: o.pageSize ?? 100, cursor });
      yield* page.images;
      if (!page.has_more || !page.next_cursor) return;
      cursor = page.next_cursor;
    }
  }

  private async processPassport(input: UploadInput | { src: string }, o: PassportOptions): Promise<PassportResult> {
    const fields: Query = {
      country: o.country,
      include_print_sheet: o.includePrintSheet,
      remove_bg: o.removeBackground,
      enhance: o.enhance,
      face_x: o.faceBox?.x,
      face_y: o.faceBox?.y,
      face_width: o.faceBox?.width,
      face_height: o.faceBox?.height,
    };
    const token = o.demoToken ?? this.options.demoToken;
    const headers: Record<string, string> = { Accept: 'application/json' };
    if (token) headers['X-Demo-Token'] = token;
    const isSource = (v: unknown): v is { src: string } => typeof v === 'object' && v !== null && !isBlob(v) && typeof (v as { src?: unknown }).src === 'string';
    if (isSource(input)) {
      return this.call<PassportResult>('GET', '/passport-photo/demo/process', { auth: false, headers, query: { src: input.src, ...fields } });
    }
    const form = new FormData();
    for (const [k, v] of Object.entries(fields)) if (v !== undefined && v !== null) form.append(k, String(v));
    form.append('file', toBlob(input), filenameOf(input, o));
    return this.call<PassportResult>('POST', '/passport-photo/demo/process', { auth: false, headers, body: form });
  }

  private async call<T>(method: string, path: string, o: CallOptions = {}): Promise<T> {
    const qs = o.query ? queryString(o.query) : '';
    const url = `${this.baseUrl}${path}${qs ? `?${qs}` : ''}`;
    const headers: Record<string, string> = { Accept: 'application/json', ...o.headers };
    let body = o.body;
    if (o.json !== undefined) {
      headers['Content-Type'] = 'application/json';
      body = JSON.stringify(o.json);
    }
    const res = await this.send(method, url, { headers, body, auth: o.auth });
    return (await res.json()) as T;
  }

  private async send(method: string, url: string, o: { headers?: Record<string, string>; body?: BodyInit; auth?: boolean }): Promise<Response> {
    const headers: Record<string, string> = { ...this.options.headers, ...o.headers };
    if (o.auth !== false) {
      if (!this.options.apiKey) throw new PictorConfigError(`${method} ${new URL(url).pathname} needs an API key (options.apiKey)`);
      headers['X-API-Key'] = this.options.apiKey;
    }
    let res: Response;
    try {
      res = await this.fetchImpl(url, {
        method,
        headers,
        body: o.body,
        signal: this.options.timeoutMs ? AbortSignal.timeout(this.options.timeoutMs) : undefined,
      });
    } catch (err) {
      throw new PictorNetworkError(`${method} ${url} failed: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
    if (!res.ok) {
      throw PictorApiError.fromText({ status: res.status, text: await res.text(), method, url, header: (n) => res.headers.get(n) });
    }
    return res;
  }
}
