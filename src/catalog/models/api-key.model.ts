import { Schema, type Connection, type Model, type Types } from 'mongoose';

export interface ApiKeyDoc {
  _id: Types.ObjectId;
  /** SHA-256 of the key; the key itself is never stored. */
  keyHash: string;
  /** First characters of the key, to tell keys apart in listings. */
  keyPrefix: string;
  userId: string;
  /** HMAC signing secret for signed transform URLs; the server must be able to read it. */
  secret: string;
  revokedAt: Date | null;
  createdAt: Date;
}

const apiKeySchema = new Schema<ApiKeyDoc>(
  {
    keyHash: { type: String, required: true, unique: true },
    keyPrefix: { type: String, required: true },
    userId: { type: String, required: true, index: true },
    secret: { type: String, required: true },
    revokedAt: { type: Date, default: null },
  },
  { timestamps: { createdAt: true, updatedAt: false }, versionKey: false },
);

export const apiKeyModel = (conn: Connection): Model<ApiKeyDoc> => conn.model<ApiKeyDoc>('ApiKey', apiKeySchema, 'api_keys');
