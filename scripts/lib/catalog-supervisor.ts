// `npm start`'s supervision of its embedded catalog process (catalog-process.ts): started once
// (a failed first start, e.g. a damaged journal, fails `npm start` with the catalog's message),
// then started again on the same port whenever it exits on its own — after a journal failure
// it exits by design — retrying every second while it cannot start (a disk still full).
import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { EmbeddedCatalogServerOptions } from '../../src/catalog/embedded-catalog-server.js';
import type { JournalLoadReport } from '../../src/catalog/journal/journaled-storage-adapter.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const CATALOG_PROCESS = path.join(here, 'catalog-process.js');
const RESTART_DELAY_MS = 1000;

interface Ready {
  type: 'ready';
  url: string;
  port: number;
  loadReport: JournalLoadReport;
  migrated: { documents: number; file: string } | null;
}

export interface SupervisedCatalog {
  first: Ready;
  stop(): Promise<void>;
}

export async function superviseCatalog(options: EmbeddedCatalogServerOptions, say: (line: string) => void): Promise<SupervisedCatalog> {
  let child: ChildProcess | null = null;
  let stopping = false;
  const launch = (port: number) =>
    new Promise<Ready>((resolve, reject) => {
      const started = fork(CATALOG_PROCESS, [JSON.stringify({ ...options, port })], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
      child = started;
      const failed = (code: number | null) => reject(new Error(`the catalog process exited (${code}) while starting`));
      started.once('exit', failed);
      started.on('message', (m: Ready) => {
        if (m?.type !== 'ready') return;
        started.off('exit', failed);
        started.once('exit', (code, signal) => void restart(m.port, code ?? signal));
        resolve(m);
      });
    });
  const restart = async (port: number, why: unknown) => {
    if (stopping) return;
    say(`catalog   the catalog process stopped (${String(why)}); starting it again from its journal`);
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, RESTART_DELAY_MS));
      if (stopping) return;
      try {
        const again = await launch(port);
        say(`catalog   back on port ${port}: ${again.loadReport.records} journal records replayed`);
        return;
      } catch {
        /* not yet (the disk may still be full): try again */
      }
    }
  };
  const first = await launch(options.port ?? 0);
  return {
    first,
    stop: async () => {
      stopping = true;
      const running = child as ChildProcess | null;
      if (!running || running.exitCode !== null || running.signalCode !== null) return;
      const exited = new Promise((resolve) => running.once('exit', resolve));
      running.kill('SIGTERM');
      await exited;
    },
  };
}
