// A workspace path on the command line: text (sent as its UTF-8 bytes) or, with --base64,
// the exact bytes as `bytesBase64` (for names that are not UTF-8).
import { usageError } from "./errors.js";
import { flag } from "./spec.js";

export const base64Flag = flag.boolean({ description: "PATH is the exact path bytes in Base64 (as the API's bytesBase64), for names that are not UTF-8." });

export function workspacePathValue(value: string, base64: boolean | undefined): string {
  if (value.length === 0) throw usageError("PATH must not be empty");
  return base64 ? value : Buffer.from(value, "utf8").toString("base64");
}
