// Dashboard entry: the API-key form, the tabs (ARIA tablist with arrow keys, synced with the URL
// hash) and the seven sections.
import { $, errorText, setStatus, wireCopyButtons } from './dom.js';
import { setNavigator } from './nav.js';
import { session } from './session.js';
import { galleryPanel } from './panels/gallery.js';
import type { Panel } from './panels/panel.js';
import { passportPanel } from './panels/passport.js';
import { playgroundPanel } from './panels/playground.js';
import { projectsPanel } from './panels/projects.js';
import { srcsetPanel } from './panels/srcset.js';
import { uploadPanel } from './panels/upload.js';
import { usagePanel } from './panels/usage.js';

const PANELS: Panel[] = [uploadPanel, galleryPanel, playgroundPanel, srcsetPanel, usagePanel, projectsPanel, passportPanel];
const DEFAULT_SECTION = 'upload';

function tabs(): HTMLButtonElement[] {
  return [...document.querySelectorAll<HTMLButtonElement>('[role="tab"]')];
}

function currentSection(): string {
  const id = location.hash.replace(/^#/, '');
  return PANELS.some((p) => p.id === id) ? id : DEFAULT_SECTION;
}

let shown = '';

function activate(id: string, options: { focusTab?: boolean; updateHash?: boolean } = {}): void {
  const panel = PANELS.find((p) => p.id === id) ?? PANELS[0];
  for (const tab of tabs()) {
    const selected = tab.dataset.section === panel.id;
    tab.setAttribute('aria-selected', String(selected));
    tab.tabIndex = selected ? 0 : -1;
    if (selected && options.focusTab) tab.focus();
  }
  const locked = panel.needsKey && !session.client;
  for (const p of PANELS) $(`panel-${p.id}`).hidden = p.id !== panel.id || locked;
  $('needs-key').hidden = !locked;
  if (options.updateHash !== false && location.hash !== `#${panel.id}`) history.replaceState(null, '', `#${panel.id}`);
  shown = panel.id;
  if (!locked) {
    Promise.resolve(panel.show()).catch((err: unknown) => console.error(err));
  }
}

function wireTabs(): void {
  const list = tabs();
  for (const tab of list) {
    tab.addEventListener('click', () => activate(tab.dataset.section as string));
    tab.addEventListener('keydown', (e) => {
      const i = list.indexOf(tab);
      let next = -1;
      if (e.key === 'ArrowRight' || e.key === 'ArrowDown') next = (i + 1) % list.length;
      else if (e.key === 'ArrowLeft' || e.key === 'ArrowUp') next = (i - 1 + list.length) % list.length;
      else if (e.key === 'Home') next = 0;
      else if (e.key === 'End') next = list.length - 1;
      if (next >= 0) {
        e.preventDefault();
        activate(list[next].dataset.section as string, { focusTab: true });
      }
    });
  }
  window.addEventListener('hashchange', () => activate(currentSection(), { updateHash: false }));
}


function renderSession(): void {
  const connected = session.client !== null && session.user !== null;
  $('key-form').hidden = connected;
  $('session-info').hidden = !connected;
  if (connected && session.user) {
    $('session-user').textContent = `Connected as ${session.user.user_id} · plan ${session.user.plan}`;
  }
}

async function connect(key: string): Promise<void> {
  const status = $('key-status');
  setStatus(status, 'Checking the key…');
  try {
    const user = await session.connect(key);
    setStatus(status, `Key accepted (user ${user.user_id}).`, 'ok');
  } catch (err) {
    setStatus(status, `The key was not accepted. ${errorText(err)}`, 'error');
  }
}

function wireKeyForm(): void {
  const form = $<HTMLFormElement>('key-form');
  const input = $<HTMLInputElement>('api-key');
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const key = input.value.trim();
    if (!key) {
      setStatus($('key-status'), 'Paste an API key first.', 'error');
      input.focus();
      return;
    }
    void connect(key).then(() => {
      input.value = '';
    });
  });
  $('forget-key').addEventListener('click', () => {
    session.forget();
    setStatus($('key-status'), 'Key forgotten.');
    input.focus();
  });
  session.on('session', () => {
    renderSession();
    activate(shown || currentSection(), { updateHash: false });
  });
}

async function boot(): Promise<void> {
  for (const p of PANELS) p.init();
  wireTabs();
  setNavigator((id) => activate(id, { focusTab: true }));
  wireKeyForm();
  wireCopyButtons();
  renderSession();
  const stored = session.storedKey();
  activate(currentSection());
  if (stored) await connect(stored);
  document.documentElement.dataset.ready = 'true';
}

void boot();
