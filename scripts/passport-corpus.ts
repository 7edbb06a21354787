// The corpus portraits through every document, as a record to compare restructurings against:
// per photo and country the checks (passed or not), compliance and the output geometry.
//
//   node dist/scripts/passport-corpus.js           compare with the record: same checks passing,
//                                                   head and eye line within 1 %
//   node dist/scripts/passport-corpus.js --write   store today's results as the record
//
// The record lives in test/fixtures/corpus/passport-record.json (--record FILE for another).
// Each portrait runs as stored (background replaced, enhanced), with background and enhancement off,
// and (first portrait, every document) as a 12 MP phone photo. Exit status 1 on any difference.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { closeModels, PASSPORT_COUNTRIES, processPassportPhoto, type ComplianceCheck, type PassportOptions } from '../src/passport/index.js';
import { phonePhoto } from './lib/phone-photo.js';

interface Outcome {
  compliant: boolean;
  /** Per check 'pass', 'fail' or 'borderline' (a value within its margin of the limit). */
  checks: Record<string, ComplianceCheck['status']>;
  head_height_ratio: number | null;
  eye_line_ratio: number | null;
  crown_y: number | null;
  chin_y: number | null;
  eye_y: number | null;
  width: number;
  height: number;
}
type Record_ = Record<string, Outcome | { error: string }>;

const { values } = parseArgs({
  options: {
    write: { type: 'boolean', default: false },
    record: { type: 'string', default: new URL('../../test/fixtures/corpus/passport-record.json', import.meta.url).pathname },
    faces: { type: 'string', default: new URL('../../test/fixtures/corpus/faces', import.meta.url).pathname },
    tolerance: { type: 'string', default: '0.01' },
  },
});

async function run(input: Buffer, options: PassportOptions): Promise<Outcome | { error: string }> {
  try {
    const r = await processPassportPhoto(input, options);
    const m = r.measurements;
    return {
      compliant: r.compliant,
      checks: Object.fromEntries(r.checks.map((c) => [c.name, c.status])),
      head_height_ratio: m.head_height_ratio,
      eye_line_ratio: m.eye_line_ratio,
      crown_y: m.crown_y,
      chin_y: m.chin_y,
      eye_y: m.eye_y,
      width: r.photo.width,
      height: r.photo.height,
    };
  } catch (e) {
    return { error: `${(e as { code?: string }).code ?? ''} ${(e as Error).message}` };
  }
}

async function collect(): Promise<Record_> {
  const dir = values.faces;
  const files = readdirSync(dir).filter((f) => /\.(png|jpe?g|webp)$/i.test(f)).sort();
  const out: Record_ = {};
  for (const [i, f] of files.entries()) {
    const buf = readFileSync(path.join(dir, f));
    const phone = i === 0 ? await phonePhoto(buf) : null;
    for (const country of PASSPORT_COUNTRIES) {
      out[`${f} ${country}`] = await run(buf, { country });
      out[`${f} ${country} plain`] = await run(buf, { country, removeBackground: false, enhance: false });
      if (phone) out[`${f} ${country} 12mp`] = await run(phone, { country });
    }
  }
  return out;
}

function compare(before: Record_, after: Record_, tolerance: number): string[] {
  const problems: string[] = [];
  let worstHead = 0;
  let worstEye = 0;
  for (const [key, was] of Object.entries(before)) {
    const now = after[key];
    if (!now) { problems.push(`${key}: missing`); continue; }
    if ('error' in was || 'error' in now) {
      if (JSON.stringify(was) !== JSON.stringify(now)) problems.push(`${key}: ${JSON.stringify(was)} -> ${JSON.stringify(now)}`);
      continue;
    }
    if (was.compliant !== now.compliant) problems.push(`${key}: compliant ${was.compliant} -> ${now.compliant}`);
    for (const [name, status] of Object.entries(was.checks)) {
      if (now.checks[name] !== status) problems.push(`${key}: check ${name} ${status} -> ${now.checks[name]}`);
    }
    for (const name of Object.keys(now.checks)) if (!(name in was.checks)) problems.push(`${key}: new check ${name}`);
    const change = (a: number | null, b: number | null): number => (a === null || b === null ? (a === b ? 0 : Infinity) : Math.abs(b / a - 1));
    const head = change(was.head_height_ratio, now.head_height_ratio);
    const eye = change(was.eye_line_ratio, now.eye_line_ratio);
    worstHead = Math.max(worstHead, head);
    worstEye = Math.max(worstEye, eye);
    if (head > tolerance) problems.push(`${key}: head ${was.head_height_ratio} -> ${now.head_height_ratio}`);
    if (eye > tolerance) problems.push(`${key}: eye line ${was.eye_line_ratio} -> ${now.eye_line_ratio}`);
  }
  console.log(`${Object.keys(before).length} runs; largest change: head height ${(worstHead * 100).toFixed(3)} %, eye line ${(worstEye * 100).toFixed(3)} %`);
  return problems;
}

const results = await collect();
await closeModels();
if (values.write) {
  writeFileSync(values.record, `${JSON.stringify(results, null, 1)}\n`);
  console.log(`${Object.keys(results).length} runs written to ${values.record}`);
} else {
  const problems = compare(JSON.parse(readFileSync(values.record, 'utf8')) as Record_, results, Number(values.tolerance));
  for (const p of problems) console.log(p);
  console.log(problems.length === 0 ? 'same checks, geometry within tolerance' : `${problems.length} differences`);
  process.exitCode = problems.length === 0 ? 0 : 1;
}
