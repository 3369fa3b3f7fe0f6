// The opaque `next` cursor of a directory listing page: the listed directory's identity and the
// last name returned, so the next page resumes after it (or is refused when the directory is no
// longer the one listed). No disk here: the Worker's store-backed listing shares it with list.ts.
import { Buffer } from "node:buffer";
import { validationFailure } from "../../contract/failure.js";

export interface ListCursor {
  readonly directory: string;
  readonly after: Uint8Array;
}

export function encodeListCursor(cursor: ListCursor): string {
  return Buffer.from(JSON.stringify({ d: cursor.directory, a: Buffer.from(cursor.after).toString("base64") })).toString("base64url");
}

/** The cursor a listing page returned; a 400 for anything else. */
export function decodeListCursor(value: string): { readonly directory: string; readonly after: Buffer } {
  try {
    const parsed = JSON.parse(Buffer.from(value, "base64url").toString("utf8")) as { d?: unknown; a?: unknown };
    if (typeof parsed.d !== "string" || typeof parsed.a !== "string") throw new Error();
    return { directory: parsed.d, after: Buffer.from(parsed.a, "base64") };
  } catch {
    throw validationFailure("cursor is not a cursor this host returned");
  }
}
