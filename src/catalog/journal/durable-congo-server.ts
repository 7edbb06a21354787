// CongoServer over the journaled storage. Commands still run one at a time (the patched
// commandQueue); what changes is when a reply leaves: only once the journal is synced up to the
// position the command reached. The queue never waits for the disk, so commands keep running while
// a sync is in flight, and one sync acknowledges every command that finished meanwhile (group
// commit, like MongoDB's j:true). A read-only command waits until the documents it looked at are
// durable (no more: reads of settled data answer at once), so nobody acts on data that could
// still be lost.
import { CommandRouter, CongoServer } from '@push.rocks/smartmongo/dist_ts/congodb/index.js';
import { JournaledStorageAdapter, type JournaledStorageOptions } from './journaled-storage-adapter.js';

type Command = unknown;
type Reply = Record<string, unknown>;

/** Parts of the patched CongoServer (patches/) replaced or used here. */
interface CongoServerInternals {
  storage: unknown;
  commandRouter: { route(command: Command): Promise<Reply> };
  commandQueue: Promise<void>;
}

export interface DurableCongoServerOptions extends JournaledStorageOptions {
  host: string;
  port: number;
}

export class DurableCongoServer extends CongoServer {
  readonly journal: JournaledStorageAdapter;

  constructor(options: DurableCongoServerOptions) {
    super({ host: options.host, port: options.port, storage: 'memory' });
    const { host: _host, port: _port, ...journalOptions } = options;
    this.journal = new JournaledStorageAdapter(journalOptions);
    const internals = this.internals();
    internals.storage = this.journal;
    internals.commandRouter = new CommandRouter(this.journal as never, this) as unknown as CongoServerInternals['commandRouter'];
  }

  private internals(): CongoServerInternals {
    return this as unknown as CongoServerInternals;
  }

  /** Replaces the patched server's method of the same name (called for every message). */
  runSerialized(command: Command): Promise<Reply> {
    const failed = this.journal.failed;
    if (failed && REFUSED_AFTER_FAILURE.has((command as { commandName?: string }).commandName ?? '')) return Promise.resolve(shuttingDown(failed));
    const internals = this.internals();
    const run = internals.commandQueue.then(async () => {
      const before = this.journal.journalPosition;
      this.journal.beginCommand();
      const reply = await internals.commandRouter.route(command);
      const after = this.journal.journalPosition;
      return { reply, wrote: after > before, position: after > before ? after : this.journal.readPosition() };
    });
    internals.commandQueue = run.then(
      () => undefined,
      () => undefined,
    );
    return run.then(async ({ reply, wrote, position }) => {
      try {
        await this.journal.whenDurable(position);
      } catch (err) {
        // The change (or one a read saw) may be in memory but is not on disk: the client must not count on it.
        return wrote ? shuttingDown(err as Error) : { ok: 0, errmsg: (err as Error).message, code: 1, codeName: 'InternalError' };
      }
      return reply;
    });
  }
}

/**
 * Once the journal has failed the catalog process exits and starts again from its journal
 * (catalog-process.ts). Until then writes and server checks are answered as a MongoDB shutting
 * down answers them: a driver that gets this marks the server unknown at once (its front door
 * refuses writes from then on and tells the others) instead of meeting a closed socket after the
 * exit and waiting out server selection. Reads still answer (one that saw an unsynced change gets
 * a plain error): the driver would retry a read refused as "shutting down", and wait for the
 * restart.
 */
const REFUSED_AFTER_FAILURE = new Set(['hello', 'isMaster', 'ismaster', 'ping', 'insert', 'update', 'delete', 'findAndModify', 'create', 'createIndexes', 'drop', 'dropIndexes', 'dropDatabase', 'renameCollection']);

function shuttingDown(err: Error): Reply {
  return { ok: 0, errmsg: `${err.message}; the catalog restarts from its journal`, code: 91, codeName: 'ShutdownInProgress' };
}
