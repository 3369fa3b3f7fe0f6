import { isAbsolute, resolve } from "node:path";
import { pathToFileURL } from "node:url";

/** Where a database lives, resolved from the user-facing `url` option. */
export type DatabaseLocation =
  | { readonly kind: "memory"; readonly url: ":memory:" }
  | { readonly kind: "file"; readonly url: string; readonly path: string }
  | { readonly kind: "remote"; readonly url: string }
  /** A Durable Object's own SQLite (the Worker host); `url` is `durable-object:<server>`, for messages. */
  | { readonly kind: "durable-object"; readonly url: string };

const REMOTE = /^(libsql|https?|wss?):\/\//i;

/**
 * Resolves a database option:
 * - `:memory:` / `file::memory:` → an ephemeral in-process database;
 * - `libsql://`, `http(s)://`, `ws(s)://` → a libSQL server (passed through unchanged);
 * - `file:` URLs and plain paths → a file; relative paths resolve under `stateDirectory`.
 */
export function resolveDatabaseLocation(url: string, stateDirectory: string): DatabaseLocation {
  const trimmed = url.trim();
  if (trimmed === "") throw new TypeError("The database URL is empty");
  if (trimmed === ":memory:" || trimmed === "file::memory:") return { kind: "memory", url: ":memory:" };
  if (REMOTE.test(trimmed)) return { kind: "remote", url: trimmed };

  let path: string;
  if (/^file:/i.test(trimmed)) {
    let rest = trimmed.slice("file:".length);
    if (rest.includes("?") || rest.includes("#")) {
      throw new TypeError(`File database URLs take no query or fragment: ${JSON.stringify(url)}`);
    }
    if (rest.startsWith("//")) {
      // file://host/path: only an empty host or localhost names this machine.
      const slash = rest.indexOf("/", 2);
      const host = slash === -1 ? rest.slice(2) : rest.slice(2, slash);
      if (host !== "" && host.toLowerCase() !== "localhost") {
        throw new TypeError(`File database URLs must name a local path: ${JSON.stringify(url)}`);
      }
      rest = slash === -1 ? "" : rest.slice(slash);
    }
    path = decodeURIComponent(rest);
    if (path === "") throw new TypeError(`The file database URL names no path: ${JSON.stringify(url)}`);
  } else if (/^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed)) {
    throw new TypeError(`Unsupported database URL scheme: ${JSON.stringify(url)}`);
  } else {
    path = trimmed;
  }
  const absolute = isAbsolute(path) ? resolve(path) : resolve(stateDirectory, path);
  return { kind: "file", url: pathToFileURL(absolute).href, path: absolute };
}

/**
 * A server URL fit for messages: scheme, host and path only. Credentials (`user:pass@`), the query
 * (libSQL reads `?authToken=` there) and the fragment are dropped, never masked in place.
 */
export function redactedServerUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
  } catch {
    // Unparseable: keep only what precedes any credentials, path or query.
    const scheme = /^([a-z][a-z0-9+.-]*:)\/\//i.exec(url)?.[1] ?? "";
    const authority = url.slice(scheme.length + 2).split(/[/?#]/)[0] ?? "";
    return `${scheme}//${authority.slice(authority.lastIndexOf("@") + 1)}`;
  }
}
