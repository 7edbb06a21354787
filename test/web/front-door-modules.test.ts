// The front door never loads sharp, MediaPipe or worker code: its module graph (every module Node
// resolves when the front door's entry module is imported, recorded by a resolve hook in a child
// process) holds none of them. The web code has no dynamic import, so the graph is all it loads.
// A control run imports the render pipeline and must see sharp, so the hook is known to record.
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';

const DIST_SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../src');
const FORBIDDEN = [/\/node_modules\/sharp\//, /\/node_modules\/@img\//, /\/node_modules\/@mediapipe\//, /\/dist\/src\/workers\//, /\/dist\/src\/imaging\/pipeline\.js$/];

const HOOKS = `import fs from 'node:fs';
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  fs.appendFileSync(process.env.MODULE_LOG, result.url + '\\n');
  return result;
}`;
const REGISTER = (hooksUrl: string) => `import { register } from 'node:module';\nregister(${JSON.stringify(hooksUrl)});\n`;

/** URLs of every module resolved while importing `entry` in a fresh Node process. */
async function moduleGraph(entry: string): Promise<string[]> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pictor-modules-'));
  try {
    const hooks = path.join(dir, 'hooks.mjs');
    const register = path.join(dir, 'register.mjs');
    const log = path.join(dir, 'modules.log');
    fs.writeFileSync(hooks, HOOKS);
    fs.writeFileSync(register, REGISTER(pathToFileURL(hooks).href));
    fs.writeFileSync(log, '');
    const script = `await import(${JSON.stringify(pathToFileURL(entry).href)});`;
    await promisify(execFile)(process.execPath, ['--import', pathToFileURL(register).href, '--input-type=module', '-e', script], {
      env: { ...process.env, MODULE_LOG: log },
      timeout: 60_000,
    });
    return fs.readFileSync(log, 'utf8').split('\n').filter(Boolean);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

describe('front door module graph', function () {
  this.timeout(120_000);

  it('the front door (app, route tables, OpenAPI document) loads no sharp, MediaPipe or worker code', async () => {
    const graph = await moduleGraph(path.join(DIST_SRC, 'web/front-door.js'));
    // What it must contain: the app, every route table, the document and the output geometry.
    for (const module of ['web/app.js', 'web/routes/route-table.js', 'web/routes/images.routes.js', 'web/openapi/document.js', 'imaging/output-size.js']) {
      expect(graph.some((url) => url.endsWith(`/dist/src/${module}`)), module).to.equal(true);
    }
    expect(graph.filter((url) => FORBIDDEN.some((re) => re.test(url)))).to.deep.equal([]);
  });

  it('control: importing the render pipeline is seen to load sharp', async () => {
    const graph = await moduleGraph(path.join(DIST_SRC, 'imaging/pipeline.js'));
    expect(graph.some((url) => /\/node_modules\/sharp\//.test(url))).to.equal(true);
  });
});
