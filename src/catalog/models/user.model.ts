import { Schema, type Connection, type Model } from 'mongoose';

export interface UserDoc {
  _id: string; // the user id that appears in image URLs
  plan: string;
  createdAt: Date;
}

const userSchema = new Schema<UserDoc>(
  {
    _id: { type: String, required: true },
    plan: { type: String, required: true, default: 'free' },
  },
  { timestamps: { createdAt: true, updatedAt: false }, versionKey: false },
);

export const userModel = (conn: Connection): Model<UserDoc> => conn.model<UserDoc>('User', userSchema, 'users');
