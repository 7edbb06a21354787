// Projects: list, create, rename (inline form) and delete (dialog, optionally moving the images to
// the default project). The default project can be neither renamed nor deleted.
import type { Project } from '../../client/index.js';
import { $, confirmDialog, errorText, h, setStatus } from '../dom.js';
import { session } from '../session.js';
import type { Panel } from './panel.js';

function status(): HTMLElement {
  return $('projects-status');
}

function row(p: Project): HTMLTableRowElement {
  const isDefault = p.slug === 'default';
  const rename = h('button', { type: 'button', disabled: isDefault, 'aria-label': `Rename ${p.name}` }, 'Rename');
  const del = h('button', { type: 'button', class: 'danger', disabled: isDefault, 'aria-label': `Delete ${p.name}` }, 'Delete');
  const tr = h(
    'tr',
    { 'data-slug': p.slug, 'data-project-id': p.projectId },
    h('th', { scope: 'row' }, p.name),
    h('td', {}, h('code', {}, p.slug)),
    h('td', {}, String(p.image_count)),
    h('td', {}, p.description ?? ''),
    h('td', {}, h('div', { class: 'actions' }, rename, del)),
  );
  rename.addEventListener('click', () => editRow(tr, p));
  del.addEventListener('click', async () => {
    const answer = await confirmDialog({
      title: `Delete project ${p.name}?`,
      message: p.image_count > 0 ? `It holds ${p.image_count} image(s). Unless you move them to the default project, they are deleted with it.` : 'It holds no images.',
      optionLabel: p.image_count > 0 ? 'Move its images to the default project' : undefined,
    });
    if (!answer.ok) return;
    try {
      const result = await session.requireClient().projects.delete(p.projectId, { moveImagesToDefault: answer.option });
      setStatus(status(), `Deleted ${p.name}: ${result.images_moved} image(s) moved, ${result.images_deleted} deleted.`, 'ok');
      changed();
    } catch (err) {
      setStatus(status(), errorText(err), 'error');
    }
  });
  return tr;
}

function editRow(tr: HTMLTableRowElement, p: Project): void {
  const name = h('input', { type: 'text', value: p.name, 'aria-label': `New name for ${p.name}`, required: true, maxlength: 100 });
  const description = h('input', { type: 'text', value: p.description ?? '', 'aria-label': `Description of ${p.name}`, maxlength: 500 });
  const save = h('button', { type: 'submit', class: 'primary' }, 'Save');
  const cancel = h('button', { type: 'button' }, 'Cancel');
  const formId = `rename-${p.projectId}`;
  const form = h('form', { id: formId }, h('div', { class: 'actions' }, save, cancel));
  name.setAttribute('form', formId);
  description.setAttribute('form', formId);
  tr.replaceChildren(h('th', { scope: 'row' }, name), h('td', {}, h('code', {}, p.slug)), h('td', {}, String(p.image_count)), h('td', {}, description), h('td', {}, form));
  name.focus();
  cancel.addEventListener('click', () => tr.replaceWith(row(p)));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const newName = name.value.trim();
    if (!newName) {
      setStatus(status(), 'A project needs a name.', 'error');
      name.focus();
      return;
    }
    try {
      const updated = await session.requireClient().projects.update(p.projectId, { name: newName, description: description.value.trim() || null });
      setStatus(status(), `Renamed to ${updated.name} (slug ${updated.slug}).`, 'ok');
      changed();
    } catch (err) {
      setStatus(status(), errorText(err), 'error');
    }
  });
}

function changed(): void {
  session.emit('projects-changed');
  session.emit('images-changed');
  void load();
}

async function load(): Promise<void> {
  try {
    const projects = await session.projects(true);
    $('projects-table').querySelector('tbody')!.replaceChildren(...projects.map(row));
  } catch (err) {
    setStatus(status(), errorText(err), 'error');
  }
}

export const projectsPanel: Panel = {
  id: 'projects',
  needsKey: true,
  init() {
    const form = $<HTMLFormElement>('project-create');
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      const name = $<HTMLInputElement>('project-name');
      const description = $<HTMLInputElement>('project-description');
      if (!name.value.trim()) {
        setStatus(status(), 'A project needs a name.', 'error');
        name.focus();
        return;
      }
      try {
        const created = await session.requireClient().projects.create({ name: name.value.trim(), description: description.value.trim() || null });
        setStatus(status(), `Created ${created.name} (slug ${created.slug}).`, 'ok');
        form.reset();
        changed();
      } catch (err) {
        setStatus(status(), errorText(err), 'error');
      }
    });
  },
  show: load,
};
