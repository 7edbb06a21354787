// Usage: storage, monthly bandwidth and monthly transformations against the plan's limits (SVG bars
// with text equivalents), and the plans side by side.
import type { Plan, Usage } from '../../client/index.js';
import { $, errorText, formatBytes, formatNumber, formatPercent, h, setStatus, svg } from '../dom.js';
import { session } from '../session.js';
import type { Panel } from './panel.js';

function bar(id: string, label: string, used: number, limit: number, format: (n: number) => string): HTMLLIElement {
  const share = limit > 0 ? Math.min(1, used / limit) : 0;
  const text = `${format(used)} of ${format(limit)} (${formatPercent(used, limit)})`;
  // A visible sliver for any non-zero use, so "some" never looks like "none".
  const width = used > 0 ? Math.max(0.6, share * 100) : 0;
  const chart = svg(
    'svg',
    { viewBox: '0 0 100 6', preserveAspectRatio: 'none', role: 'img', 'aria-labelledby': `${id}-title`, focusable: 'false' },
    svg('title', { id: `${id}-title` }, `${label}: ${text}`),
    svg('rect', { class: 'track', x: 0, y: 0, width: 100, height: 6, rx: 1, 'stroke-width': 0.2, 'vector-effect': 'non-scaling-stroke' }),
    svg('rect', { class: share >= 0.9 ? 'used high' : 'used', x: 0, y: 0, width, height: 6, rx: 1, 'data-share': share.toFixed(6) }),
  );
  return h('li', { class: 'bar', id }, h('div', { class: 'bar-label' }, label, h('span', {}, text)), chart);
}

function render(usage: Usage, plans: Plan[]): void {
  const period = new Date(usage.period_start);
  const month = period.toLocaleString('en', { month: 'long', year: 'numeric', timeZone: 'UTC' });
  const plan = plans.find((p) => p.id === usage.plan);
  $('usage-summary').replaceChildren(
    h('p', {}, h('strong', {}, 'Plan: '), plan ? `${plan.name} ($${plan.price_usd_per_month}/month)` : usage.plan),
    h('p', {}, h('strong', {}, 'Period: '), `${month} (UTC)`),
    h('p', {}, h('strong', {}, 'Images: '), formatNumber(usage.image_count)),
    h('p', {}, h('strong', {}, 'Derived sizes: '), formatNumber(usage.derivative_count)),
  );
  $('usage-bars').replaceChildren(
    bar('usage-storage', 'Storage', usage.storage_bytes, usage.limits.storage_bytes, formatBytes),
    bar('usage-bandwidth', `Bandwidth in ${month}`, usage.bandwidth_bytes, usage.limits.bandwidth_bytes_per_month, formatBytes),
    bar('usage-transformations', `Transformations in ${month}`, usage.transformations, usage.limits.transformations_per_month, formatNumber),
  );
  $('plans-table')
    .querySelector('tbody')!
    .replaceChildren(
      ...plans.map((p) =>
        h(
          'tr',
          { class: p.id === usage.plan ? 'current-plan' : undefined, 'aria-current': p.id === usage.plan ? 'true' : undefined },
          h('th', { scope: 'row' }, p.name, p.id === usage.plan ? ' (yours)' : ''),
          h('td', {}, formatBytes(p.storage_bytes)),
          h('td', {}, formatBytes(p.bandwidth_bytes_per_month)),
          h('td', {}, formatNumber(p.transformations_per_month)),
          h('td', {}, formatBytes(p.max_upload_bytes)),
          h('td', {}, `$${p.price_usd_per_month}`),
        ),
      ),
    );
}

async function load(): Promise<void> {
  const status = $('usage-status');
  setStatus(status, 'Loading…');
  try {
    const [usage, plans] = await Promise.all([session.requireClient().usage(), session.anonymous.plans()]);
    render(usage, plans);
    setStatus(status, `Updated ${new Date().toLocaleTimeString('en')}.`);
  } catch (err) {
    setStatus(status, errorText(err), 'error');
  }
}

export const usagePanel: Panel = {
  id: 'usage',
  needsKey: true,
  init() {
    $('usage-refresh').addEventListener('click', () => void load());
  },
  show: load,
};
