// Passport demo: an uploaded photo or a URL, a country and the options; shows the source with the
// face box, the photo, the print sheet and the compliance checks. No API key: the request goes
// from this page's origin (the browser sends Origin/Referer, which DEMO_ORIGINS must list) or
// carries a pasted demo token (kept in session storage).
import type { PassportCountry, PassportOptions, PassportResult } from '../../client/index.js';
import { $, errorText, formatBytes, h, setStatus, svg } from '../dom.js';
import { session } from '../session.js';
import type { Panel } from './panel.js';

let sourceUrl = '';
let specsLoaded = false;

function sourceMode(): 'file' | 'url' {
  return $<HTMLInputElement>('pp-source-url').checked ? 'url' : 'file';
}

function faceBox(): PassportOptions['faceBox'] | null | 'partial' {
  const values = ['x', 'y', 'width', 'height'].map((k) => $<HTMLInputElement>(`pp-face-${k}`).value.trim());
  if (values.every((v) => v === '')) return null;
  if (values.some((v) => v === '')) return 'partial';
  const [x, y, width, height] = values.map(Number);
  return { x, y, width, height };
}

type Check = PassportResult['checks'][number];

/** The result word: text, not only colour. A borderline check is a warning to look at. */
function verdict(c: Check): { word: string; cls: string; status: string } {
  if (c.status === 'borderline') return { word: '⚠ Borderline', cls: 'check-warn', status: 'borderline' };
  if (c.passed) return { word: '✓ Pass', cls: 'check-pass', status: 'pass' };
  return c.severity === 'warning' ? { word: '⚠ Warning', cls: 'check-warn', status: 'warning' } : { word: '✗ Fail', cls: 'check-fail', status: 'fail' };
}

interface SpecBands {
  headHeightRatio: [number, number];
  eyeLineRatio: [number, number] | null;
  topMarginMm: [number, number] | null;
  print: { heightMm: number };
}

/**
 * The lines measured on the photo (crown, eye line, chin, face centre; output pixels) over it, with
 * the document's bands: where the eyes may be, where the chin may be for the measured crown (the
 * head-height range), where the crown may be (a top-margin rule), the centring tolerance. The same
 * in words under the photo.
 */
function drawMeasuredLines(result: PassportResult): void {
  const { width: W, height: H } = result.photo;
  const m = result.measurements as Record<string, number | null>;
  const spec = result.spec as unknown as SpecBands;
  const overlay = $('pp-lines') as unknown as SVGSVGElement;
  overlay.setAttribute('viewBox', `0 0 ${W} ${H}`);
  const parts: SVGElement[] = [];
  const band = (cls: string, y0: number, y1: number, title: string): void => {
    parts.push(svg('rect', { class: cls, x: 0, y: y0, width: W, height: Math.max(1, y1 - y0) }, svg('title', {}, title)));
  };
  const words: string[] = [];
  if (spec.eyeLineRatio) {
    band('band-eye', H * (1 - spec.eyeLineRatio[1]), H * (1 - spec.eyeLineRatio[0]), 'eye-line range');
    words.push(`eye-line range y ${Math.round(H * (1 - spec.eyeLineRatio[1]))}-${Math.round(H * (1 - spec.eyeLineRatio[0]))}`);
  }
  if (spec.topMarginMm) {
    const px = H / spec.print.heightMm;
    band('band-crown', spec.topMarginMm[0] * px, spec.topMarginMm[1] * px, 'range of the top of the hair');
  }
  const crown = m.crown_y;
  if (crown !== null && crown !== undefined) {
    band('band-chin', crown + spec.headHeightRatio[0] * H, crown + spec.headHeightRatio[1] * H, 'chin range for this crown (head height)');
    words.push(`chin range for this crown y ${Math.round(crown + spec.headHeightRatio[0] * H)}-${Math.round(crown + spec.headHeightRatio[1] * H)}`);
  }
  const centring = result.checks.find((c) => c.name === 'horizontal_centering')?.limit;
  if (typeof centring === 'number') parts.push(svg('rect', { class: 'band-centre', x: W * (0.5 - centring), y: 0, width: 2 * centring * W, height: H }, svg('title', {}, 'centring tolerance')));
  const line = (cls: string, y: number | null | undefined, label: string): void => {
    if (y === null || y === undefined) {
      words.unshift(`${label}: not measured`);
      return;
    }
    parts.push(svg('line', { class: cls, x1: 0, x2: W, y1: y, y2: y }), svg('text', { class: cls, x: W - 6, y: y - 4, 'text-anchor': 'end' }, label));
    words.unshift(`${label} y ${Math.round(y)}`);
  };
  line('line-chin', m.chin_y, 'chin');
  line('line-eye', m.eye_y, 'eyes');
  line('line-crown', crown, 'crown');
  if (typeof m.face_center_x === 'number') parts.push(svg('line', { class: 'line-centre', x1: m.face_center_x, x2: m.face_center_x, y1: 0, y2: H }));
  overlay.replaceChildren(...parts);
  $('pp-lines-legend').textContent = `Measured on the photo: ${words.join(', ')} (output pixels from the top).`;
}

function render(result: PassportResult): void {
  const img = $<HTMLImageElement>('pp-source-img');
  img.src = sourceUrl;
  const box = $('pp-face-box');
  if (result.face) {
    const b = result.face.box;
    box.hidden = false;
    box.style.left = `${b.x * 100}%`;
    box.style.top = `${b.y * 100}%`;
    box.style.width = `${b.width * 100}%`;
    box.style.height = `${b.height * 100}%`;
    const conf = result.face.confidence !== null ? `, confidence ${(result.face.confidence * 100).toFixed(0)} %` : '';
    $('pp-source-caption').textContent = `Source with the face box (x ${b.x.toFixed(2)}, y ${b.y.toFixed(2)}, ${b.width.toFixed(2)}×${b.height.toFixed(2)}${conf})`;
  } else {
    box.hidden = true;
    $('pp-source-caption').textContent = 'Source';
  }
  const photo = result.photo;
  $<HTMLImageElement>('pp-photo').src = photo.data_url;
  $<HTMLImageElement>('pp-photo').alt = `Passport photo for ${result.spec.name}`;
  $<HTMLAnchorElement>('pp-photo-download').href = photo.data_url;
  $('pp-photo-caption').textContent = `${photo.width}×${photo.height} px at ${photo.dpi} dpi · ${formatBytes(photo.bytes)} · ${result.spec.name}`;
  const sheet = result.print_sheet;
  $('pp-sheet-figure').hidden = !sheet;
  if (sheet) {
    $<HTMLImageElement>('pp-sheet-img').src = sheet.data_url;
    $<HTMLAnchorElement>('pp-sheet-download').href = sheet.data_url;
    $('pp-sheet-caption').textContent = `4×6 in sheet · ${sheet.copies} copies · ${sheet.width}×${sheet.height} px`;
  }
  const looks = result.checks.filter((c) => c.status !== 'pass');
  $('pp-issues').replaceChildren(
    ...(looks.length
      ? looks.map((c) => h('li', { 'data-check': c.name, 'data-status': verdict(c).status }, h('strong', {}, `${verdict(c).word}: ${c.name.replace(/_/g, ' ')}`), ` — ${c.message}`))
      : [h('li', {}, 'Nothing: every check passed clearly.')]),
  );
  $('pp-checks')
    .querySelector('tbody')!
    .replaceChildren(
      ...result.checks.map((c) =>
        h(
          'tr',
          { 'data-check': c.name, 'data-passed': String(c.passed), 'data-status': c.status },
          h('th', { scope: 'row' }, c.name.replace(/_/g, ' ')),
          h('td', { class: verdict(c).cls }, verdict(c).word),
          h('td', {}, c.message),
          h('td', {}, c.value === null ? '—' : String(c.value)),
          h('td', {}, c.expected ?? 'not set by this document'),
        ),
      ),
    );
  drawMeasuredLines(result);
  $('pp-warnings').replaceChildren(...(result.warnings.length ? result.warnings.map((w) => h('li', {}, w)) : [h('li', {}, 'None.')]));
  $('pp-result').hidden = false;
}

async function submit(): Promise<void> {
  const status = $('pp-status');
  const token = $<HTMLInputElement>('pp-token').value.trim();
  session.setDemoToken(token);
  const box = faceBox();
  if (box === 'partial') {
    setStatus(status, 'Give all four face box values, or none.', 'error');
    return;
  }
  const options: PassportOptions = {
    country: $<HTMLSelectElement>('pp-country').value as PassportCountry,
    includePrintSheet: $<HTMLInputElement>('pp-sheet').checked,
    removeBackground: $<HTMLInputElement>('pp-remove-bg').checked,
    enhance: $<HTMLInputElement>('pp-enhance').checked,
    faceBox: box ?? undefined,
    demoToken: token || undefined,
  };
  let input: File | { src: string };
  if (sourceMode() === 'url') {
    const url = $<HTMLInputElement>('pp-url').value.trim();
    if (!url) {
      setStatus(status, 'Enter the photo URL.', 'error');
      $('pp-url').focus();
      return;
    }
    input = { src: url };
    sourceUrl = url;
  } else {
    const file = $<HTMLInputElement>('pp-file').files?.[0];
    if (!file) {
      setStatus(status, 'Choose a portrait photo.', 'error');
      $('pp-file').focus();
      return;
    }
    input = file;
    if (sourceUrl.startsWith('blob:')) URL.revokeObjectURL(sourceUrl);
    sourceUrl = URL.createObjectURL(file);
  }
  const button = $<HTMLButtonElement>('pp-submit');
  button.disabled = true;
  setStatus(status, 'Processing (face detection, crop, background, checks)…');
  try {
    const result = await (session.client ?? session.anonymous).passport.process(input, options);
    render(result);
    const failed = result.checks.filter((c) => !c.passed && c.severity !== 'warning').length;
    const warned = result.checks.filter((c) => !c.passed && c.severity === 'warning').length;
    const borderline = result.checks.filter((c) => c.status === 'borderline').length;
    const verdict = result.compliant ? 'compliant' : 'not compliant';
    setStatus(
      status,
      `Done: ${verdict}. ${failed} of ${result.checks.length} checks failed, ${warned} warning(s) (${borderline} borderline).`,
      result.compliant ? 'ok' : 'info',
    );
  } catch (err) {
    const hint = err && typeof err === 'object' && 'status' in err && (err as { status: number }).status === 403 ? ' Ask the operator to add this origin to DEMO_ORIGINS, or paste the demo token.' : '';
    setStatus(status, errorText(err) + hint, 'error');
  } finally {
    button.disabled = false;
  }
}

export const passportPanel: Panel = {
  id: 'passport',
  needsKey: false,
  init() {
    const sync = () => {
      const url = sourceMode() === 'url';
      $('pp-url-row').hidden = !url;
      $('pp-file-row').hidden = url;
    };
    $('pp-source-file').addEventListener('change', sync);
    $('pp-source-url').addEventListener('change', sync);
    $<HTMLInputElement>('pp-token').value = session.demoToken();
    $('pp-form').addEventListener('submit', (e) => {
      e.preventDefault();
      void submit();
    });
  },
  async show() {
    if (specsLoaded) return;
    try {
      const specs = await session.anonymous.passport.specs();
      const select = $<HTMLSelectElement>('pp-country');
      const previous = select.value;
      select.replaceChildren(...specs.countries.map((c) => new Option(`${specs.specs[c]?.name ?? c}`, c)));
      select.value = specs.countries.includes(previous as PassportCountry) ? previous : specs.countries[0];
      specsLoaded = true;
    } catch (err) {
      setStatus($('pp-status'), `Could not load the country list: ${errorText(err)}`, 'error');
    }
  },
};
