// Transform playground: one control per parameter of the registry (src/imaging/params.ts, compiled
// into this bundle: the same list the server validates with), live preview through
// `GET /image/{path}` with the key header (fetch → blob URL), and the URLs to copy.
import { TRANSFORM_PARAMS, type ImageParams, type ImageRecord, type ParamDefinition } from '../../client/index.js';
import { $, debounce, errorText, formatBytes, h, setStatus } from '../dom.js';
import { fillImageSelect, session } from '../session.js';
import type { Panel } from './panel.js';

const PARAMS: readonly ParamDefinition[] = TRANSFORM_PARAMS.filter((p) => (p.sets as readonly string[]).includes('B'));

const START: Record<string, number> = { w: 800, h: 600 };
/** Applied from the start: a preview of a large original at full size would be slow to encode. */
const APPLIED_AT_START = new Set(['w']);

function startValue(p: ParamDefinition): string {
  const d = p.defaultB ?? p.defaultA;
  if (START[p.name] !== undefined) return String(START[p.name]);
  if (typeof d === 'number' || typeof d === 'string') return String(d);
  return String(p.minimum ?? '');
}

function rangeText(p: ParamDefinition): string {
  if (p.enum) return `One of ${p.enum.join(', ')}.`;
  if (p.type === 'string') return p.example ? `For example ${p.example}.` : '';
  if (p.type === 'boolean') return 'On or off.';
  const words = p.keywords ? `, or ${p.keywords.join(', ')}` : '';
  return `${p.minimum} to ${p.maximum}${words}.`;
}

function control(p: ParamDefinition): HTMLElement {
  const apply = h('input', { type: 'checkbox', id: `pg-on-${p.name}`, 'data-param': p.name, 'aria-describedby': `pg-help-${p.name}`, checked: APPLIED_AT_START.has(p.name) });
  const name = h('label', { class: 'param-name', for: `pg-on-${p.name}` }, p.name);
  const help = h('p', { class: 'param-help', id: `pg-help-${p.name}` }, `${p.description} ${rangeText(p)}`);
  if (p.type === 'boolean') {
    return h('div', { class: 'param', 'data-param': p.name }, h('span', { class: 'param-name' }, apply, name), h('span', {}, `${p.name}=true`), h('span'), help);
  }
  if (p.enum) {
    const select = h('select', { id: `pg-${p.name}`, 'aria-label': `${p.name} value` });
    for (const v of p.enum) select.append(new Option(v, v));
    select.value = String(p.defaultB ?? p.defaultA ?? p.enum[0]);
    select.addEventListener('change', () => {
      apply.checked = true;
      schedule();
    });
    return h('div', { class: 'param', 'data-param': p.name }, h('span', { class: 'param-name' }, apply, name), select, h('span'), help);
  }
  if (p.type === 'string') {
    // Free-form values (crop, bg, preset, wm, v): a text field checked against the registry's pattern.
    const text = h('input', { type: 'text', id: `pg-${p.name}`, pattern: p.pattern, placeholder: p.example ?? '', 'aria-label': `${p.name} value` });
    text.addEventListener('input', () => {
      if (text.value === '' || !text.checkValidity()) return;
      apply.checked = true;
      schedule();
    });
    return h('div', { class: 'param', 'data-param': p.name }, h('span', { class: 'param-name' }, apply, name), text, h('span'), help);
  }
  const step = p.type === 'integer' ? (p.multipleOf ?? 1) : (p.step ?? 0.1);
  const value = startValue(p);
  const range = h('input', { type: 'range', id: `pg-${p.name}`, min: p.minimum, max: p.maximum, step, value, 'aria-label': `${p.name} slider` });
  const num = h('input', { type: 'number', id: `pg-${p.name}-value`, min: p.minimum, max: p.maximum, step, value, 'aria-label': `${p.name} value` });
  range.addEventListener('input', () => {
    num.value = range.value;
    apply.checked = true;
    schedule();
  });
  num.addEventListener('input', () => {
    if (num.value === '' || !num.checkValidity()) return;
    range.value = num.value;
    apply.checked = true;
    schedule();
  });
  if (p.keywords) {
    // A number or one of its words (q=auto): the word, when chosen, wins over the slider.
    const word = h('select', { id: `pg-${p.name}-word`, 'aria-label': `${p.name} word` });
    word.append(new Option('number', ''));
    for (const w of p.keywords) word.append(new Option(w, w));
    word.addEventListener('change', () => {
      apply.checked = true;
      schedule();
    });
    return h('div', { class: 'param', 'data-param': p.name }, h('span', { class: 'param-name' }, apply, name), range, h('span', {}, num, word), help);
  }
  return h('div', { class: 'param', 'data-param': p.name }, h('span', { class: 'param-name' }, apply, name), range, num, help);
}

/** The parameters currently applied, by name. */
function currentParams(): ImageParams {
  const out: Record<string, string | number | boolean> = {};
  for (const p of PARAMS) {
    const apply = $<HTMLInputElement>(`pg-on-${p.name}`);
    if (!apply.checked) continue;
    if (p.type === 'boolean') out[p.name] = true;
    else if (p.enum) out[p.name] = $<HTMLSelectElement>(`pg-${p.name}`).value;
    else if (p.type === 'string') out[p.name] = $<HTMLInputElement>(`pg-${p.name}`).value;
    else if (p.keywords && $<HTMLSelectElement>(`pg-${p.name}-word`).value !== '') out[p.name] = $<HTMLSelectElement>(`pg-${p.name}-word`).value;
    else out[p.name] = Number($<HTMLInputElement>(`pg-${p.name}`).value);
  }
  return out as ImageParams;
}

let sequence = 0;
let objectUrl = '';
let pendingSelection: ImageRecord | null = null;

async function refresh(): Promise<void> {
  const client = session.client;
  if (!client) return;
  const select = $<HTMLSelectElement>('pg-src');
  const src = select.value;
  const info = $('pg-info');
  const preview = $<HTMLImageElement>('pg-preview');
  if (!src) {
    setStatus(info, 'Upload an image to try transformations on it.');
    return;
  }
  const params = currentParams();
  const url = client.imageUrl(src, params, 'preview');
  const imageId = select.selectedOptions[0]?.dataset.imageId;
  $<HTMLInputElement>('pg-url').value = url;
  // The public URL names the image's version: immutable, and new after a replacement.
  const version = select.selectedOptions[0]?.dataset.version;
  $<HTMLInputElement>('pg-public-url').value = imageId ? client.publicImageUrl({ imageId, version }, params) : '';
  $<HTMLTextAreaElement>('pg-curl').value = `curl -H "X-API-Key: $PICTOR_KEY" -H "Accept: image/avif,image/webp" "${url}" -o preview`;
  const mine = ++sequence;
  setStatus(info, 'Rendering…');
  preview.setAttribute('aria-busy', 'true');
  try {
    const { blob, notes } = await client.fetchImageWithNotes(src, params, { name: 'preview' });
    if (mine !== sequence) return;
    const next = URL.createObjectURL(blob);
    await new Promise<void>((resolve, reject) => {
      preview.onload = () => resolve();
      preview.onerror = () => reject(new Error('The browser could not decode the preview'));
      preview.src = next;
    });
    if (objectUrl) URL.revokeObjectURL(objectUrl);
    objectUrl = next;
    if (mine !== sequence) return;
    preview.dataset.url = url;
    // What the render chose or found: q=auto's quality, remove_bg without a person.
    const noted = [...(notes.quality !== undefined ? [`quality ${notes.quality} chosen`] : []), ...(notes.removeBg === 'no-person' ? ['no person found'] : [])];
    setStatus(info, [`${blob.type || 'image'}`, `${preview.naturalWidth}×${preview.naturalHeight} px`, formatBytes(blob.size), ...noted].join(' · '), 'ok');
  } catch (err) {
    if (mine === sequence) setStatus(info, errorText(err), 'error');
  } finally {
    if (mine === sequence) preview.removeAttribute('aria-busy');
  }
}

const schedule = debounce(() => void refresh(), 250);

export const playgroundPanel: Panel = {
  id: 'playground',
  needsKey: true,
  init() {
    $('pg-params').replaceChildren(...PARAMS.map(control));
    $('pg-params').addEventListener('change', (e) => {
      if ((e.target as HTMLInputElement).type === 'checkbox') schedule();
    });
    $('pg-src').addEventListener('change', schedule);
    $('pg-reset').addEventListener('click', () => {
      for (const p of PARAMS) {
        $<HTMLInputElement>(`pg-on-${p.name}`).checked = APPLIED_AT_START.has(p.name);
        if (p.enum) $<HTMLSelectElement>(`pg-${p.name}`).value = String(p.defaultB ?? p.defaultA ?? p.enum[0]);
        else if (p.type === 'string') $<HTMLInputElement>(`pg-${p.name}`).value = '';
        else if (p.type !== 'boolean') {
          $<HTMLInputElement>(`pg-${p.name}`).value = startValue(p);
          $<HTMLInputElement>(`pg-${p.name}-value`).value = startValue(p);
          if (p.keywords) $<HTMLSelectElement>(`pg-${p.name}-word`).value = '';
        }
      }
      schedule();
    });
    session.on('select-image', (img) => {
      pendingSelection = img as ImageRecord;
    });
  },
  async show() {
    const select = $<HTMLSelectElement>('pg-src');
    await fillImageSelect(select, pendingSelection?.public_url);
    pendingSelection = null;
    await refresh();
  },
};
