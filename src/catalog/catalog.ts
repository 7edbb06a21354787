// The catalog: one mongoose connection and its models. No transactions and no TTL indexes, so it
// runs on any MongoDB: each write is atomic on its own document, and the operations of several
// steps (project deletion, key revocation, an upload's usage) are ordered so that a re-run
// finishes them.
import mongoose, { type Connection, type Model, type mongo } from 'mongoose';
import { apiKeyModel, type ApiKeyDoc } from './models/api-key.model.js';
import { derivativeModel, type DerivativeDoc } from './models/derivative.model.js';
import { imageModel, type ImageDoc } from './models/image.model.js';
import { projectModel, type ProjectDoc } from './models/project.model.js';
import { usageModel, type UsageDoc } from './models/usage.model.js';
import { userModel, type UserDoc } from './models/user.model.js';
import { catalogWriteConcern } from './write-concern.js';

export interface CatalogOptions {
  /** How long an operation waits for a server before failing (fast 503s when Mongo is down). */
  serverSelectionTimeoutMs?: number;
  /**
   * How long one operation (or a new connection) may wait for the server's answer before it fails.
   * Unset: no limit, as the driver's default. A server behind a broken link sends no reset, so
   * without it a request would wait until the link heals.
   */
  answerTimeoutMs?: number;
}

export class Catalog {
  readonly users: Model<UserDoc>;
  readonly apiKeys: Model<ApiKeyDoc>;
  readonly images: Model<ImageDoc>;
  readonly derivatives: Model<DerivativeDoc>;
  readonly projects: Model<ProjectDoc>;
  readonly usage: Model<UsageDoc>;
  /**
   * The driver's own collections, for the few hot-path writes built fully typed by hand:
   * mongoose's casting and document building cost 0.2-0.45 ms of CPU per operation (measured on
   * the 2-core bench machine), more than the round trip itself. No defaults, timestamps or
   * validation are applied here, so every use sets what the schema would. Used only inside
   * src/catalog, and never together with the models in one function (docs/maintainers.md).
   */
  readonly driver: { images: mongo.Collection<ImageDoc>; derivatives: mongo.Collection<DerivativeDoc>; usage: mongo.Collection<UsageDoc> };

  private constructor(readonly connection: Connection) {
    this.users = userModel(connection);
    this.apiKeys = apiKeyModel(connection);
    this.images = imageModel(connection);
    this.derivatives = derivativeModel(connection);
    this.projects = projectModel(connection);
    this.usage = usageModel(connection);
    const db = connection.db;
    if (!db) throw new Error('catalog not connected');
    this.driver = {
      images: db.collection<ImageDoc>(this.images.collection.collectionName),
      derivatives: db.collection<DerivativeDoc>(this.derivatives.collection.collectionName),
      usage: db.collection<UsageDoc>(this.usage.collection.collectionName),
    };
  }

  static async connect(url: string, options: CatalogOptions = {}): Promise<Catalog> {
    const connection = mongoose.createConnection(url, {
      serverSelectionTimeoutMS: options.serverSelectionTimeoutMs ?? 3000,
      ...(options.answerTimeoutMs ? { socketTimeoutMS: options.answerTimeoutMs, connectTimeoutMS: options.answerTimeoutMs } : {}),
      // Commands fail instead of queueing forever while the server is away.
      bufferCommands: false,
      autoIndex: false,
      writeConcern: catalogWriteConcern(url),
    });
    await connection.asPromise();
    const catalog = new Catalog(connection);
    await catalog.ensureIndexes();
    return catalog;
  }

  async ensureIndexes(): Promise<void> {
    for (const model of [this.users, this.apiKeys, this.images, this.derivatives, this.projects, this.usage] as Model<unknown>[]) {
      await model.createIndexes();
    }
  }

  /**
   * False from the moment the driver loses the server (a closed or refused connection) until it
   * reaches it again; meanwhile each command waits out server selection before it fails.
   */
  get connected(): boolean {
    return this.connection.readyState === mongoose.ConnectionStates.connected;
  }

  async ping(): Promise<void> {
    const db = this.connection.db;
    if (!db) throw new Error('catalog not connected');
    await db.command({ ping: 1 });
  }

  async close(): Promise<void> {
    await this.connection.close();
  }
}
