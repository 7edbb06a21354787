// Shares the cores among the jobs rendering in this process: each pipeline starts with the
// libvips thread count that fits the number of jobs running at that moment (libvips reads the
// setting when a pipeline starts, so running pipelines keep theirs). See libvipsThreadsFor.
import sharp from 'sharp';
import { libvipsThreadsFor, type Config } from '../src/config.js';

export class LibvipsThreads {
  private active = 0;

  constructor(private readonly config: Pick<Config, 'sharpThreads'>) {}

  async run<T>(render: () => Promise<T>): Promise<T> {
    this.active++;
    sharp.concurrency(libvipsThreadsFor(this.config, this.active));
    try {
      return await render();
    } finally {
      this.active--;
    }
  }
}
