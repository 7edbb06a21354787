// The cluster benchmark's client (scripts/bench-cluster.ts), run inside the client host's
// namespace. One task per run, given as JSON; prints one JSON line with what it measured.
//   upload      stores a generated JPEG (width × height, noisy like a photo); prints its public URL
//   transforms  `jobs` renders of that image, each a new derivative (widths from `firstWidth`),
//               `inFlight` at a time; prints the wall time and every answer's status
// Usage: node bench-client.js '<json Task>'
import sharp from 'sharp';

type Task =
  | { kind: 'upload'; door: string; key: string; width: number; height: number; publicId: string }
  | { kind: 'transforms'; door: string; key: string; source: string; jobs: number; inFlight: number; firstWidth: number; format: string };

const task = JSON.parse(process.argv[2]) as Task;
const headers = { 'X-API-Key': task.key };

if (task.kind === 'upload') {
  const bytes = await sharp({ create: { width: task.width, height: task.height, channels: 3, background: { r: 120, g: 110, b: 100 }, noise: { type: 'gaussian', mean: 120, sigma: 30 } } }).jpeg({ quality: 85 }).toBuffer();
  const form = new FormData();
  form.append('public_id', task.publicId);
  form.append('file', new Blob([new Uint8Array(bytes)], { type: 'image/jpeg' }), `${task.publicId}.jpg`);
  const res = await fetch(`${task.door}/cdn/upload`, { method: 'POST', body: form, headers });
  const body = (await res.json()) as { public_url?: string };
  if (res.status !== 200 || !body.public_url) throw new Error(`upload answered ${res.status}: ${JSON.stringify(body)}`);
  process.stdout.write(JSON.stringify({ url: body.public_url }) + '\n');
} else {
  const statuses: number[] = [];
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  const lane = async () => {
    while (next < task.jobs) {
      const width = task.firstWidth + next++;
      const t0 = performance.now();
      const res = await fetch(`${task.door}/transform?src=${encodeURIComponent(task.source)}&w=${width}&f=${task.format}`, { headers });
      await res.arrayBuffer();
      latencies.push(performance.now() - t0);
      statuses.push(res.status);
    }
  };
  await Promise.all(Array.from({ length: task.inFlight }, lane));
  process.stdout.write(JSON.stringify({ ms: performance.now() - started, statuses, latencies }) + '\n');
}
