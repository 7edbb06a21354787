// Gallery: cursor-paged image list with a project filter; thumbnails from the public
// `/cdn/{imageId}` route; delete through the confirm dialog.
import type { ImageRecord } from '../../client/index.js';
import { $, confirmDialog, errorText, formatBytes, h, setStatus } from '../dom.js';
import { goTo } from '../nav.js';
import { fillProjectSelect, session } from '../session.js';
import type { Panel } from './panel.js';

/** Cursors of the pages seen so far: cursors[i] opens page i (page 0 has none). */
let cursors: (string | undefined)[] = [undefined];
let page = 0;

export let selectedImage: ImageRecord | null = null;

function card(img: ImageRecord): HTMLLIElement {
  const client = session.requireClient();
  const name = `${img.public_id}.${img.format === 'jpeg' ? 'jpg' : img.format}`;
  const thumb = h('img', { src: client.publicImageUrl(img, { w: 320, h: 320, fit: 'cover', f: 'auto' }), alt: img.public_id, loading: 'lazy', width: 320, height: 320 });
  const open = h('button', { type: 'button', 'aria-label': `Open ${name} in the playground` }, 'Playground');
  const srcset = h('button', { type: 'button', 'aria-label': `Make a srcset of ${name}` }, 'Srcset');
  const del = h('button', { type: 'button', class: 'danger', 'aria-label': `Delete ${name}` }, 'Delete');
  open.addEventListener('click', () => {
    selectedImage = img;
    session.emit('select-image', img);
    goTo('playground');
  });
  srcset.addEventListener('click', () => {
    selectedImage = img;
    session.emit('select-image', img);
    goTo('srcset');
  });
  del.addEventListener('click', async () => {
    const answer = await confirmDialog({ title: 'Delete image?', message: `Delete ${name} and every size made from it? This cannot be undone.` });
    if (!answer.ok) return;
    const status = $('gallery-status');
    try {
      const result = await session.requireClient().images.delete([img.imageId]);
      session.emit('images-changed');
      session.emit('projects-changed');
      await load();
      setStatus(status, result.deleted.length ? `Deleted ${name}.` : `${name} was already gone.`, 'ok');
    } catch (err) {
      setStatus(status, errorText(err), 'error');
    }
  });
  return h(
    'li',
    { class: 'card', 'data-image-id': img.imageId },
    h('figure', {}, thumb, h('figcaption', {}, h('strong', {}, name), h('br'), `${img.width}×${img.height} · ${formatBytes(img.size)} · ${img.project}`)),
    h('div', { class: 'actions' }, open, srcset, del),
  );
}

async function load(): Promise<void> {
  const status = $('gallery-status');
  const grid = $('gallery-grid');
  const project = $<HTMLSelectElement>('gallery-project').value || undefined;
  const limit = Number($<HTMLSelectElement>('gallery-limit').value);
  setStatus(status, 'Loading…');
  grid.setAttribute('aria-busy', 'true');
  try {
    const result = await session.requireClient().images.list({ project, limit, cursor: cursors[page] });
    // Deleting the last image of a page: step back.
    if (result.images.length === 0 && page > 0) {
      page--;
      return load();
    }
    grid.replaceChildren(...result.images.map(card));
    cursors = cursors.slice(0, page + 1);
    if (result.has_more && result.next_cursor) cursors.push(result.next_cursor);
    $<HTMLButtonElement>('gallery-prev').disabled = page === 0;
    $<HTMLButtonElement>('gallery-next').disabled = !result.has_more;
    $('gallery-page').textContent = `Page ${page + 1}`;
    setStatus(status, result.images.length === 0 ? 'No images here yet.' : `${result.images.length} image${result.images.length === 1 ? '' : 's'} on this page${result.has_more ? ', more on the next' : ''}.`);
  } catch (err) {
    setStatus(status, errorText(err), 'error');
  } finally {
    grid.removeAttribute('aria-busy');
  }
}

function restart(): void {
  cursors = [undefined];
  page = 0;
  void load();
}

export const galleryPanel: Panel = {
  id: 'gallery',
  needsKey: true,
  init() {
    $('gallery-project').addEventListener('change', restart);
    $('gallery-limit').addEventListener('change', restart);
    $('gallery-refresh').addEventListener('click', () => void load());
    $('gallery-prev').addEventListener('click', () => {
      if (page > 0) {
        page--;
        void load();
      }
    });
    $('gallery-next').addEventListener('click', () => {
      if (cursors[page + 1]) {
        page++;
        void load();
      }
    });
    session.on('session', () => {
      cursors = [undefined];
      page = 0;
      $('gallery-grid').replaceChildren();
    });
  },
  async show() {
    // Fresh each time: images and projects may also change through the API, not only here.
    await fillProjectSelect($<HTMLSelectElement>('gallery-project'), { allLabel: 'All projects', valueBy: 'slug', refresh: true });
    await load();
  },
};
