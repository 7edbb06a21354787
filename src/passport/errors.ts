// Input problems the caller can fix (the HTTP layer maps them to 422 with `message` as the detail).

export type PassportInputErrorCode =
  | 'invalid_country'
  | 'undecodable_image'
  | 'image_too_large'
  | 'no_face'
  | 'multiple_faces'
  | 'face_too_small'
  | 'invalid_face_box';

export class PassportInputError extends Error {
  override readonly name = 'PassportInputError';
  /** Suggested HTTP status. */
  readonly status = 422;
  constructor(
    readonly code: PassportInputErrorCode,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }
}
