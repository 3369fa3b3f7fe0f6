// The CLI's printed JSON keeps the API's exact bytes and adds their text beside them wherever
// the bytes are valid UTF-8: a WorkspacePath `{ bytesBase64 }` (git status, files list, turn
// rewind, …) gains `path`, a terminal's `terminal.data` event gains `text`. Nothing is removed
// or changed, so scripts that read `bytesBase64` keep working.
const utf8 = new TextDecoder("utf-8", { fatal: true });

/** The UTF-8 text of Base64 bytes, or undefined when they are not valid UTF-8. */
export function utf8Text(base64: string): string | undefined {
  try {
    return utf8.decode(Buffer.from(base64, "base64"));
  } catch {
    return undefined;
  }
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/** A JSON.stringify replacer that adds the decoded text beside workspace path and terminal bytes. */
export function readableBytes(_key: string, value: unknown): unknown {
  if (!isRecord(value)) return value;
  const keys = Object.keys(value);
  // A WorkspacePath: exactly `{ bytesBase64 }`.
  if (keys.length === 1 && typeof value["bytesBase64"] === "string") {
    const path = utf8Text(value["bytesBase64"]);
    return path === undefined ? value : { bytesBase64: value["bytesBase64"], path };
  }
  if (value["type"] === "terminal.data" && typeof value["dataBase64"] === "string" && !("text" in value)) {
    const text = utf8Text(value["dataBase64"]);
    return text === undefined ? value : { ...value, text };
  }
  return value;
}

/** A path for people: its text, or `base64:<bytes>` when it is not UTF-8. */
export function pathText(path: { readonly bytesBase64: string } | undefined): string {
  if (path === undefined) return "";
  return utf8Text(path.bytesBase64) ?? `base64:${path.bytesBase64}`;
}
