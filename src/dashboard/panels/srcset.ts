// Srcset generator: `GET /generate/srcset` (server-signed URLs, so the browser loads them without a
// key), the <img> markup to copy, a preview of every candidate and a live responsive <img>.
import { FORMAT_VALUES, MAX_SIDE, SRCSET_WIDTHS, TRANSFORM_PARAMS, type ImageRecord, type SrcsetResult } from '../../client/index.js';
import { $, errorText, h, setStatus } from '../dom.js';
import { fillImageSelect, session } from '../session.js';
import type { Panel } from './panel.js';

const escapeAttr = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

let pendingSelection: ImageRecord | null = null;

/** The widths typed, or 'auto' (the server chooses them about 20 kB apart). */
function parseWidths(text: string): number[] | 'auto' | null {
  if (text.trim().toLowerCase() === 'auto') return 'auto';
  const parts = text.split(',').map((s) => s.trim()).filter(Boolean);
  if (parts.length < 1 || parts.length > 20) return null;
  const widths = parts.map(Number);
  return widths.every((w) => Number.isInteger(w) && w >= 1 && w <= MAX_SIDE) ? widths : null;
}

function candidates(result: SrcsetResult): { url: string; width: number }[] {
  return result.srcset.split(', ').map((entry) => {
    const at = entry.lastIndexOf(' ');
    return { url: entry.slice(0, at), width: Number(entry.slice(at + 1, -1)) };
  });
}

function showCurrent(img: HTMLImageElement): void {
  const current = img.currentSrc;
  const width = /[?&]w=(\d+)/.exec(current)?.[1];
  $('ss-current').textContent = current ? `This window loaded the ${width} px candidate (${img.naturalWidth}×${img.naturalHeight} px).` : '';
}

async function generate(): Promise<void> {
  const status = $('ss-status');
  const src = $<HTMLSelectElement>('ss-src').value;
  const widths = parseWidths($<HTMLInputElement>('ss-widths').value);
  if (!src) return setStatus(status, 'Upload an image first.', 'error');
  if (!widths) {
    setStatus(status, `Widths must be auto or 1 to 20 comma-separated integers from 1 to ${MAX_SIDE}.`, 'error');
    $('ss-widths').focus();
    return;
  }
  const f = $<HTMLSelectElement>('ss-format').value as (typeof FORMAT_VALUES)[number];
  const q = Number($<HTMLInputElement>('ss-quality').value);
  const sizes = $<HTMLInputElement>('ss-sizes').value.trim() || undefined;
  setStatus(status, 'Generating…');
  try {
    const result = await session.requireClient().srcset(src, { widths, f, q, sizes });
    $<HTMLTextAreaElement>('ss-html').value = `<img srcset="${escapeAttr(result.srcset)}"\n     sizes="${escapeAttr(result.sizes)}"\n     src="${escapeAttr(result.default)}"\n     alt="">`;
    const list = $('ss-previews');
    list.replaceChildren(
      ...candidates(result).map(({ url, width }) => {
        const caption = h('figcaption', {}, `${width}w · loading…`);
        const img = h('img', { src: url, alt: `Candidate ${width} px wide`, loading: 'lazy', 'data-width': width });
        img.addEventListener('load', () => {
          caption.textContent = `${width}w · ${img.naturalWidth}×${img.naturalHeight} px`;
          img.dataset.loaded = 'true';
        });
        img.addEventListener('error', () => {
          caption.textContent = `${width}w · failed to load`;
          img.dataset.loaded = 'false';
        });
        return h('li', {}, h('figure', {}, img, caption));
      }),
    );
    const responsive = $<HTMLImageElement>('ss-responsive');
    responsive.onload = () => showCurrent(responsive);
    responsive.sizes = result.sizes;
    responsive.srcset = result.srcset;
    responsive.src = result.default;
    $('ss-result').hidden = false;
    setStatus(status, `${candidates(result).length} candidates, signed for browsers (no key needed).`, 'ok');
  } catch (err) {
    setStatus(status, errorText(err), 'error');
  }
}

export const srcsetPanel: Panel = {
  id: 'srcset',
  needsKey: true,
  init() {
    const format = $<HTMLSelectElement>('ss-format');
    for (const f of FORMAT_VALUES) format.append(new Option(f, f));
    $('ss-widths-help').textContent = `Comma-separated, 1-${SRCSET_WIDTHS.maxCount} widths of 1-${MAX_SIDE} px, or auto (chosen about 20 kB apart).`;
    // The quality slider is the registry's q: its range and set A default.
    const q = TRANSFORM_PARAMS.find((p) => p.name === 'q')!;
    const quality = $<HTMLInputElement>('ss-quality');
    Object.assign(quality, { min: String(q.minimum), max: String(q.maximum), value: String(q.defaultA) });
    $('ss-quality-value').textContent = quality.value;
    quality.addEventListener('input', () => ($('ss-quality-value').textContent = quality.value));
    $('ss-form').addEventListener('submit', (e) => {
      e.preventDefault();
      void generate();
    });
    session.on('select-image', (img) => {
      pendingSelection = img as ImageRecord;
    });
  },
  async show() {
    await fillImageSelect($<HTMLSelectElement>('ss-src'), pendingSelection?.public_url);
    pendingSelection = null;
  },
};
