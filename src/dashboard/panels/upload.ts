// Upload: drag and drop (or the file picker, or Enter/Space on the drop zone), one XHR per file so
// the upload's progress events drive a <progress> bar; answers and errors parsed like the SDK's.
import { PictorApiError, type UploadResult } from '../../client/index.js';
import { $, errorText, formatBytes, h } from '../dom.js';
import { baseUrl, fillProjectSelect, session } from '../session.js';
import type { Panel } from './panel.js';

function uploadWithProgress(file: File, fields: Record<string, string>, onProgress: (loaded: number, total: number) => void): Promise<UploadResult> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    const url = `${baseUrl}/cdn/upload`;
    xhr.open('POST', url);
    xhr.setRequestHeader('X-API-Key', session.key);
    xhr.setRequestHeader('Accept', 'application/json');
    xhr.upload.addEventListener('progress', (e) => {
      if (e.lengthComputable) onProgress(e.loaded, e.total);
    });
    xhr.addEventListener('load', () => {
      if (xhr.status >= 200 && xhr.status < 300) {
        try {
          resolve(JSON.parse(xhr.responseText) as UploadResult);
        } catch (err) {
          reject(err instanceof Error ? err : new Error(String(err)));
        }
        return;
      }
      reject(PictorApiError.fromText({ status: xhr.status, text: xhr.responseText, method: 'POST', url, header: (n) => xhr.getResponseHeader(n) }));
    });
    xhr.addEventListener('error', () => reject(new Error('Network error while uploading')));
    xhr.addEventListener('abort', () => reject(new Error('Upload aborted')));
    const form = new FormData();
    // Fields before the file: the service reads them before the file streams in.
    for (const [k, v] of Object.entries(fields)) if (v) form.append(k, v);
    form.append('file', file, file.name);
    xhr.send(form);
  });
}

let counter = 0;

async function uploadOne(file: File, fields: Record<string, string>): Promise<void> {
  const id = `upload-${++counter}`;
  const bar = h('progress', { id: `${id}-progress`, max: 100, value: 0, 'aria-label': `Upload progress of ${file.name}` });
  const status = h('span', { class: 'status', role: 'status' }, 'Waiting…');
  const item = h('li', { class: 'upload-item', id, 'data-state': 'uploading' }, h('span', { class: 'name' }, `${file.name} · ${formatBytes(file.size)}`), status, bar);
  $('upload-list').prepend(item);
  let events = 0;
  try {
    const result = await uploadWithProgress(file, fields, (loaded, total) => {
      events++;
      const pct = Math.round((loaded / total) * 100);
      bar.value = pct;
      item.dataset.progressEvents = String(events);
      status.textContent = pct < 100 ? `Uploading ${pct} %` : 'Processing…';
    });
    bar.value = 100;
    item.dataset.state = 'done';
    item.dataset.imageId = result.imageId;
    status.textContent = `Stored · ${result.width}×${result.height} · ${formatBytes(result.size)} · project ${result.project}`;
    status.className = 'status ok';
    item.append(h('a', { href: result.public_url, target: '_blank', rel: 'noopener' }, result.public_url));
    session.emit('images-changed');
    session.emit('projects-changed');
  } catch (err) {
    item.dataset.state = 'failed';
    status.textContent = errorText(err);
    status.className = 'status error';
    status.setAttribute('role', 'alert');
  }
}

async function uploadFiles(files: File[]): Promise<void> {
  if (files.length === 0) return;
  const publicIdInput = $<HTMLInputElement>('upload-public-id');
  const publicId = files.length === 1 ? publicIdInput.value.trim() : '';
  const project = $<HTMLSelectElement>('upload-project').value;
  // One at a time: the order of the list is the order of the uploads, and the line is not saturated.
  for (const file of files) await uploadOne(file, { public_id: publicId, project });
  if (publicId) publicIdInput.value = '';
}

export const uploadPanel: Panel = {
  id: 'upload',
  needsKey: true,
  init() {
    const zone = $('drop-zone');
    const input = $<HTMLInputElement>('upload-files');
    zone.addEventListener('click', () => input.click());
    zone.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' || e.key === ' ') {
        e.preventDefault();
        input.click();
      }
    });
    zone.addEventListener('dragover', (e) => {
      e.preventDefault();
      if (e.dataTransfer) e.dataTransfer.dropEffect = 'copy';
      zone.classList.add('dragging');
    });
    zone.addEventListener('dragleave', () => zone.classList.remove('dragging'));
    zone.addEventListener('drop', (e) => {
      e.preventDefault();
      zone.classList.remove('dragging');
      void uploadFiles([...(e.dataTransfer?.files ?? [])]);
    });
    input.addEventListener('change', () => {
      const files = [...(input.files ?? [])];
      input.value = '';
      void uploadFiles(files);
    });
    session.on('projects-changed', () => {
      if (!$('panel-upload').hidden) void this.show();
    });
  },
  async show() {
    await fillProjectSelect($<HTMLSelectElement>('upload-project'), { valueBy: 'name', refresh: true });
  },
};
