// The signed-in state: the API key (sessionStorage only, never localStorage or cookies), a
// PictorClient for it, and a small event bus the sections use to refresh each other.
import { PictorApiError, PictorClient, type ImageRecord, type KeyInfo, type Project } from '../client/index.js';

const KEY_STORAGE = 'pictor.apiKey';
const DEMO_TOKEN_STORAGE = 'pictor.demoToken';

/** The API is served by the same front door as this page: `/dashboard/` → `/`. */
export const baseUrl = new URL('../', location.href).href.replace(/\/+$/, '');

export type SessionEvent = 'session' | 'images-changed' | 'projects-changed' | 'select-image';

class Session extends EventTarget {
  client: PictorClient | null = null;
  /** A client without a key, for the public routes (plans, passport demo). */
  readonly anonymous = new PictorClient({ baseUrl });
  user: KeyInfo | null = null;
  key = '';
  private projectsCache: Project[] | null = null;

  storedKey(): string {
    return sessionStorage.getItem(KEY_STORAGE) ?? '';
  }

  async connect(key: string): Promise<KeyInfo> {
    const client = new PictorClient({ baseUrl, apiKey: key });
    const user = await client.verifyKey();
    this.client = client;
    this.user = user;
    this.key = key;
    this.projectsCache = null;
    sessionStorage.setItem(KEY_STORAGE, key);
    this.emit('session');
    return user;
  }

  forget(): void {
    sessionStorage.removeItem(KEY_STORAGE);
    this.client = null;
    this.user = null;
    this.key = '';
    this.projectsCache = null;
    this.emit('session');
  }

  requireClient(): PictorClient {
    if (!this.client) throw new Error('Connect with an API key first');
    return this.client;
  }

  async projects(refresh = false): Promise<Project[]> {
    if (!this.projectsCache || refresh) this.projectsCache = await this.requireClient().projects.list();
    return this.projectsCache;
  }

  /** Recent images for the source pickers (newest first). */
  async recentImages(limit = 100): Promise<ImageRecord[]> {
    return (await this.requireClient().images.list({ limit })).images;
  }

  demoToken(): string {
    return sessionStorage.getItem(DEMO_TOKEN_STORAGE) ?? '';
  }

  setDemoToken(token: string): void {
    if (token) sessionStorage.setItem(DEMO_TOKEN_STORAGE, token);
    else sessionStorage.removeItem(DEMO_TOKEN_STORAGE);
  }

  emit(type: SessionEvent, detail?: unknown): void {
    if (type === 'projects-changed') this.projectsCache = null;
    this.dispatchEvent(new CustomEvent(type, { detail }));
  }

  on(type: SessionEvent, handler: (detail: unknown) => void): void {
    this.addEventListener(type, (e) => handler((e as CustomEvent).detail));
  }
}

export const session = new Session();

/** Fills a project <select>; `allLabel` adds a first "all" option with value "". */
export async function fillProjectSelect(select: HTMLSelectElement, options: { allLabel?: string; valueBy: 'slug' | 'name'; refresh?: boolean }): Promise<void> {
  const previous = select.value;
  const projects = await session.projects(options.refresh);
  select.replaceChildren();
  if (options.allLabel) select.append(new Option(options.allLabel, ''));
  for (const p of projects) select.append(new Option(`${p.name} (${p.image_count})`, options.valueBy === 'slug' ? p.slug : p.name));
  if ([...select.options].some((o) => o.value === previous)) select.value = previous;
}

/** Fills an image-source <select> with the recent images (value = public URL). */
export async function fillImageSelect(select: HTMLSelectElement, preferred?: string): Promise<ImageRecord[]> {
  const previous = preferred ?? select.value;
  const images = await session.recentImages();
  select.replaceChildren();
  if (images.length === 0) select.append(new Option('No images yet: upload one first', ''));
  for (const img of images) {
    const option = new Option(`${img.public_id}.${img.format === 'jpeg' ? 'jpg' : img.format} (${img.width}×${img.height})`, img.public_url);
    option.dataset.imageId = img.imageId;
    if (img.version) option.dataset.version = img.version;
    select.append(option);
  }
  if ([...select.options].some((o) => o.value === previous)) select.value = previous;
  return images;
}

export { PictorApiError };
