// A DATA_DIR for power-cut tests: the `npm start` tree runs with the power-cut file system
// (test/harness/power-cut-fs.ts) in every Node process, and `cut()` is a power cut — SIGKILL of
// the whole tree, then the DATA_DIR replaced by what was fsynced. Redis' own files are not seen
// by it (redis-server is not a Node process), so a cut loses all of Redis' data: harsher than a
// real cut, which loses at most its last second.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { freePort } from '../../scripts/lib/redis-server.js';
import { rebuildFromImage, resetImage, type CutReport } from '../harness/power-cut-fs.js';
import { createKeyWithCli, PictorTree } from '../faults/crash-helpers.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const POWER_CUT_FS = pathToFileURL(path.resolve(here, '../harness/power-cut-fs.js')).href;

export class PowerCutSite {
  tree: PictorTree | null = null;
  cuts = 0;
  private constructor(
    readonly dataDir: string,
    readonly image: string,
    readonly port: number,
  ) {}

  static async create(): Promise<PowerCutSite> {
    const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'pictor-power-cut-')));
    const site = new PowerCutSite(path.join(root, 'data'), path.join(root, 'durable-image'), await freePort());
    fs.mkdirSync(site.dataDir);
    resetImage(site.dataDir, site.image);
    return site;
  }

  /** What every process of the tree (and the keys CLI) runs with. */
  env(extra: Record<string, string> = {}): Record<string, string> {
    return { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import=${POWER_CUT_FS}`.trim(), PICTOR_POWER_CUT_IMAGE: this.image, ...extra };
  }

  async start(extra: Record<string, string> = {}): Promise<PictorTree> {
    await this.tree?.kill();
    this.tree = await PictorTree.start(this.dataDir, this.port, this.env(extra));
    return this.tree;
  }

  /** The power cut: every process killed, everything not fsynced gone. */
  async cut(): Promise<CutReport> {
    await this.tree?.kill();
    this.tree = null;
    this.cuts++;
    return rebuildFromImage(this.dataDir, this.image);
  }

  createKey(userId: string): Promise<string> {
    return createKeyWithCli(this.dataDir, userId, this.env());
  }

  async remove(): Promise<void> {
    await this.tree?.kill();
    fs.rmSync(path.dirname(this.dataDir), { recursive: true, force: true });
  }
}
