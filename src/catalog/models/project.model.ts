import { Schema, type Connection, type Model, type Types } from 'mongoose';

export interface ProjectDoc {
  _id: Types.ObjectId;
  userId: string;
  name: string;
  slug: string;
  description: string | null;
  createdAt: Date;
  updatedAt: Date;
}

const projectSchema = new Schema<ProjectDoc>(
  {
    userId: { type: String, required: true },
    name: { type: String, required: true },
    slug: { type: String, required: true },
    description: { type: String, default: null },
  },
  { timestamps: true, versionKey: false },
);
projectSchema.index({ userId: 1, slug: 1 }, { unique: true });

export const projectModel = (conn: Connection): Model<ProjectDoc> => conn.model<ProjectDoc>('Project', projectSchema, 'projects');
