// This machine's stable author identity: a UUID in `author-id` (0600) in the durable state
// directory, beside model-preferences.json, created on first use. The TUI sends it as `authorId`
// with every prompt and shows `you` for entries that carry it, a short author ID for other
// writers; entries written before authorship fall back to the connection (clientId) match.
import { randomUUID } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeDirectorySync } from "../../../services/contract/directory.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The identity in `directory`, created when absent; undefined when it can be neither read nor made. */
export function authorIdentity(directory: string): string | undefined {
  const file = join(directory, "author-id");
  const existing = readIdentity(file);
  if (existing !== undefined) return existing;
  try {
    makeDirectorySync(directory, 0o700);
    // `wx`: two TUIs starting at once agree on the first one written.
    writeFileSync(file, `${randomUUID()}\n`, { flag: "wx", mode: 0o600 });
  } catch {
    // Written meanwhile by another process, or not writable: read what is there.
  }
  return readIdentity(file);
}

function readIdentity(file: string): string | undefined {
  try {
    const text = readFileSync(file, "utf8").trim();
    return UUID.test(text) ? text : undefined;
  } catch {
    return undefined;
  }
}
