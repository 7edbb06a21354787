// Small DOM helpers: element lookup, an element builder (text only — never innerHTML with data),
// formatting, status lines and the confirm dialog.

export function $<T extends HTMLElement = HTMLElement>(id: string): T {
  const el = document.getElementById(id);
  if (!el) throw new Error(`#${id} is missing from index.html`);
  return el as T;
}

type Attrs = Record<string, string | number | boolean | undefined | null>;
type Child = Node | string | null | undefined | false;

/** `h('button', {type: 'button', class: 'primary'}, 'Save')`. Attributes with false/null/undefined are left out. */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children) if (c !== null && c !== undefined && c !== false) el.append(c);
  return el;
}

const SVG_NS = 'http://www.w3.org/2000/svg';
export function svg(tag: string, attrs: Attrs = {}, ...children: Child[]): SVGElement {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined && v !== null && v !== false) el.setAttribute(k, String(v));
  for (const c of children) if (c !== null && c !== undefined && c !== false) el.append(c);
  return el;
}

export function formatBytes(n: number): string {
  if (!Number.isFinite(n)) return '—';
  const units = ['B', 'kB', 'MB', 'GB', 'TB'];
  let v = n;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  const text = i === 0 ? String(v) : v.toFixed(v < 10 ? 2 : 1).replace(/\.0+$/, '');
  return `${text} ${units[i]}`;
}

export function formatNumber(n: number): string {
  return new Intl.NumberFormat('en').format(n);
}

export function formatPercent(used: number, limit: number): string {
  if (limit <= 0) return '—';
  const p = (used / limit) * 100;
  if (p === 0) return '0 %';
  if (p < 0.01) return '< 0.01 %';
  return `${p < 10 ? p.toFixed(2) : p.toFixed(1)} %`;
}

/** Sets a status line; `kind` error also makes it an alert for screen readers. */
export function setStatus(el: HTMLElement, text: string, kind: 'info' | 'ok' | 'error' = 'info'): void {
  el.textContent = text;
  el.classList.toggle('error', kind === 'error');
  el.classList.toggle('ok', kind === 'ok');
  if (kind === 'error') el.setAttribute('role', 'alert');
  else el.setAttribute('role', 'status');
}

export function errorText(err: unknown): string {
  if (err && typeof err === 'object' && 'status' in err && 'detail' in err) {
    const e = err as { status: number; detail: string };
    return `Error ${e.status}: ${e.detail}`;
  }
  return err instanceof Error ? err.message : String(err);
}

/** The shared <dialog>: resolves with whether the user confirmed and the optional checkbox's state. */
export function confirmDialog(options: { title: string; message: string; confirmLabel?: string; optionLabel?: string }): Promise<{ ok: boolean; option: boolean }> {
  const dialog = $<HTMLDialogElement>('confirm-dialog');
  $('confirm-title').textContent = options.title;
  $('confirm-message').textContent = options.message;
  $('confirm-ok').textContent = options.confirmLabel ?? 'Delete';
  const optionRow = $('confirm-option-row');
  const option = $<HTMLInputElement>('confirm-option');
  option.checked = false;
  optionRow.hidden = !options.optionLabel;
  $('confirm-option-label').textContent = options.optionLabel ?? '';
  const opener = document.activeElement as HTMLElement | null;
  return new Promise((resolve) => {
    dialog.addEventListener(
      'close',
      () => {
        resolve({ ok: dialog.returnValue === 'ok', option: option.checked });
        if (opener && document.contains(opener)) opener.focus();
      },
      { once: true },
    );
    dialog.returnValue = 'cancel';
    dialog.showModal();
    $('confirm-cancel').focus();
  });
}

/** Copy buttons: `<button data-copy="input-id">`. Falls back to selecting the text when the clipboard is unavailable (plain http). */
export function wireCopyButtons(root: ParentNode = document): void {
  root.querySelectorAll<HTMLButtonElement>('button[data-copy]').forEach((button) => {
    button.addEventListener('click', async () => {
      const target = $<HTMLInputElement | HTMLTextAreaElement>(button.dataset.copy as string);
      target.select();
      let copied = false;
      try {
        await navigator.clipboard.writeText(target.value);
        copied = true;
      } catch {
        copied = document.execCommand?.('copy') ?? false;
      }
      const label = button.textContent;
      button.textContent = copied ? 'Copied' : 'Selected';
      setTimeout(() => (button.textContent = label), 1500);
    });
  });
}

export function debounce<A extends unknown[]>(fn: (...args: A) => void, ms: number): (...args: A) => void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return (...args: A) => {
    clearTimeout(timer);
    timer = setTimeout(() => fn(...args), ms);
  };
}
