// Scenario 5, AVIF vs WebP: encode time, size and PSNR at 800 px, measured by avif.ts in its own process.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { track } from './processes.js';
import { extra, fmt, notes, pad, ratio } from './report.js';
import { benchDir, photosDir, say } from './settings.js';

export async function avifScenario(): Promise<void> {
  say('\n5. AVIF vs WebP (800 px, 6 photos, encode time, size and PSNR)');
  const out = await new Promise<string>((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(benchDir, 'avif.js')], { env: { ...process.env, PHOTOS_DIR: photosDir }, stdio: ['ignore', 'pipe', 'inherit'] });
    track(child);
    let text = '';
    child.stdout.on('data', (c: Buffer) => (text += c.toString()));
    child.on('exit', (code) => (code === 0 ? resolve(text) : reject(new Error(`avif measurement exited with ${code}`))));
  });
  type Sample = { quality: number; encodeMs: number; renderMs: number; bytes: number; psnr: number };
  const avif = JSON.parse(out) as {
    threads: number;
    webpEffort: number;
    webpQuality: number;
    defaultAvifEffort: number;
    matchedQuality: number;
    webp: Sample;
    matched: Record<string, Sample>;
    sameQuality: Record<string, Sample>;
  };
  extra.avif = avif;
  say(`  AVIF quality matched to WebP q${avif.webpQuality} by PSNR: q${avif.matchedQuality}; libvips threads ${avif.threads} (as a worker job)`);
  say(`  ${pad('encoder', 22)} ${'encode ms'.padStart(10)} ${'render ms'.padStart(10)} ${'KB'.padStart(7)} ${'PSNR dB'.padStart(8)}`);
  const line5 = (label: string, s: Sample, vs = '') =>
    say(`  ${pad(label, 22)} ${fmt(s.encodeMs).padStart(10)} ${(s.renderMs ? fmt(s.renderMs) : '').padStart(10)} ${fmt(s.bytes / 1024).padStart(7)} ${fmt(s.psnr, 2).padStart(8)}${vs}`);
  line5(`webp q${avif.webpQuality} effort ${avif.webpEffort}`, avif.webp);
  for (const [e, s] of Object.entries(avif.matched)) {
    const mark = Number(e) === avif.defaultAvifEffort ? '  ← default' : '';
    line5(`avif q${s.quality} effort ${e}`, s, `  ×${fmt(s.encodeMs / avif.webp.encodeMs, 2)} time, ×${fmt(s.bytes / avif.webp.bytes, 2)} size${mark}`);
  }
  for (const [e, s] of Object.entries(avif.sameQuality)) {
    line5(`avif q${s.quality} effort ${e}`, s, `  ×${fmt(s.encodeMs / avif.webp.encodeMs, 2)} time, ×${fmt(s.bytes / avif.webp.bytes, 2)} size (same q number)`);
  }
  const d = avif.matched[String(avif.defaultAvifEffort)];
  if (d) {
    ratio(`AVIF effort ${avif.defaultAvifEffort}: encode time / WebP`, d.encodeMs / avif.webp.encodeMs, null, 2, `${fmt(d.encodeMs)} vs ${fmt(avif.webp.encodeMs)} ms per 800 px image, encode only (whole render ${fmt(d.renderMs)} vs ${fmt(avif.webp.renderMs)} ms)`);
    ratio(`AVIF effort ${avif.defaultAvifEffort}: size / WebP at equal PSNR`, d.bytes / avif.webp.bytes, null, 1, `${fmt(d.bytes / 1024)} KB (q${d.quality}, ${fmt(d.psnr, 2)} dB) vs ${fmt(avif.webp.bytes / 1024)} KB (q${avif.webpQuality}, ${fmt(avif.webp.psnr, 2)} dB)`);
  } else {
    notes.push(`AVIF default effort ${avif.defaultAvifEffort} is not among the measured efforts`);
  }
}
