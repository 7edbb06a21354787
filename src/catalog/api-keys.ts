// API credentials: a key (shown once, stored as SHA-256 — keys are 192-bit random, so a fast hash
// is enough) and a secret used to sign transform URLs (HMAC), which the server must read.
import crypto from 'node:crypto';
import type { Catalog } from './catalog.js';
import { PLANS, planById } from './plans.js';

export interface Credential {
  userId: string;
  key: string;
  secret: string;
  plan: string;
  /** Id of the key record: the `kid` of signed URLs (the client SDK needs it with the secret to sign). */
  keyId: string;
}

export interface AuthenticatedUser {
  userId: string;
  plan: string;
  secret: string;
  keyId: string;
}

// Never starts with '_' or '.', so user prefixes can't collide with internal prefixes like _staging/.
const USER_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

export function isValidUserId(userId: string): boolean {
  return USER_ID_PATTERN.test(userId);
}

export function hashKey(key: string): string {
  return crypto.createHash('sha256').update(key).digest('hex');
}

function randomToken(prefix: string, bytes: number): string {
  return `${prefix}_${crypto.randomBytes(bytes).toString('base64url')}`;
}

async function ensureUser(catalog: Catalog, userId: string, plan?: string): Promise<void> {
  if (!isValidUserId(userId)) throw new Error(`invalid user id "${userId}" (letters, digits, _ and -, up to 64)`);
  if (plan !== undefined && planById(plan).id !== plan) throw new Error(`unknown plan "${plan}"`);
  await catalog.users.updateOne(
    { _id: userId },
    plan ? { $set: { plan }, $setOnInsert: { createdAt: new Date() } } : { $setOnInsert: { plan: 'free', createdAt: new Date() } },
    { upsert: true },
  );
}

export async function createCredential(catalog: Catalog, userId: string, plan?: string): Promise<Credential> {
  await ensureUser(catalog, userId, plan);
  const key = randomToken('pk', 24);
  const secret = randomToken('sk', 32);
  const doc = await catalog.apiKeys.create({ keyHash: hashKey(key), keyPrefix: key.slice(0, 10), userId, secret, revokedAt: null });
  const user = await catalog.users.findById(userId).lean();
  return { userId, key, secret, plan: user?.plan ?? 'free', keyId: String(doc._id) };
}

/**
 * Makes a known key/secret pair exist (API_KEYS_SEED); repeated calls change nothing. With a
 * plan, the user is put on it (without one, a new user starts on free and an existing one keeps its plan).
 */
export async function seedCredential(catalog: Catalog, userId: string, key: string, secret: string, plan?: string): Promise<void> {
  await ensureUser(catalog, userId, plan);
  await catalog.apiKeys.updateOne(
    { keyHash: hashKey(key) },
    { $setOnInsert: { keyPrefix: key.slice(0, 10), userId, secret, revokedAt: null, createdAt: new Date() } },
    { upsert: true },
  );
}

/** Parses `user:key:secret[:plan],…`. */
export function parseKeySeed(seed: string): { userId: string; key: string; secret: string; plan?: string }[] {
  return seed
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((triple) => {
      const [userId, key, secret, plan, ...rest] = triple.split(':');
      if (!userId || !key || !secret || rest.length > 0 || !isValidUserId(userId) || key.length < 8 || secret.length < 8) {
        throw new Error(`API_KEYS_SEED entry "${triple.slice(0, 20)}…" must be user:key:secret[:plan] (key and secret at least 8 characters)`);
      }
      if (plan !== undefined && planById(plan).id !== plan) {
        throw new Error(`API_KEYS_SEED entry "${triple.slice(0, 20)}…": unknown plan "${plan}" (${PLANS.map((p) => p.id).join(', ')})`);
      }
      return { userId, key, secret, ...(plan !== undefined ? { plan } : {}) };
    });
}

export async function authenticateKey(catalog: Catalog, key: string): Promise<AuthenticatedUser | null> {
  const doc = await catalog.apiKeys.findOne({ keyHash: hashKey(key), revokedAt: null }).lean();
  if (!doc) return null;
  const user = await catalog.users.findById(doc.userId).lean();
  return { userId: doc.userId, plan: user?.plan ?? 'free', secret: doc.secret, keyId: String(doc._id) };
}

export async function listCredentials(catalog: Catalog, userId?: string) {
  const docs = await catalog.apiKeys.find(userId ? { userId } : {}).sort({ _id: 1 }).lean();
  return docs.map((d) => ({ id: String(d._id), userId: d.userId, keyPrefix: d.keyPrefix, createdAt: d.createdAt, revokedAt: d.revokedAt }));
}

/** Revokes by key id, key prefix or the full key. Returns how many were revoked. */
export async function revokeCredential(catalog: Catalog, idOrKey: string): Promise<number> {
  const filter = /^[0-9a-f]{24}$/.test(idOrKey)
    ? { _id: idOrKey }
    : idOrKey.length > 20
      ? { keyHash: hashKey(idOrKey) }
      : { keyPrefix: idOrKey };
  const res = await catalog.apiKeys.updateMany({ ...filter, revokedAt: null }, { $set: { revokedAt: new Date() } });
  return res.modifiedCount;
}

/** For signed URLs: the credential behind a key id (`kid`), unless revoked. */
export async function credentialById(catalog: Catalog, keyId: string): Promise<AuthenticatedUser | null> {
  if (!/^[0-9a-f]{24}$/.test(keyId)) return null;
  const doc = await catalog.apiKeys.findOne({ _id: keyId, revokedAt: null }).lean();
  if (!doc) return null;
  const user = await catalog.users.findById(doc.userId).lean();
  return { userId: doc.userId, plan: user?.plan ?? 'free', secret: doc.secret, keyId: String(doc._id) };
}

/** The plan id of a user ('free' when the user has no record). */
export async function userPlanId(catalog: Catalog, userId: string): Promise<string> {
  const user = await catalog.users.findById(userId, { plan: 1 }).lean();
  return user?.plan ?? 'free';
}
