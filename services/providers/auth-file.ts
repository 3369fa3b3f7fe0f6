// The global `auth.json`: stored provider connections, shared by every database, in opencode's
// exact shape (`{ "<providerId>": { "type": "api", "key": "…" } | { "type": "oauth", … } }`).
// It lives in the state directory with owner-only permissions (0600; its directory 0700) and
// is replaced atomically (write a 0600 temporary file, fsync, rename). An auth.json that is not a
// JSON object fails every connection operation and is never overwritten.
// `ZE_HARNESS_AUTH_CONTENT` supplies the content for scripted runs; it is then read-only.
import { randomUUID } from "node:crypto";
import { readFileSync, statSync } from "node:fs";
import { chmod, open, rename, unlink } from "node:fs/promises";
import { dirname, isAbsolute, join } from "node:path";
import { stateDirectory, type Env } from "../config/paths.js";
import { injectedCredentialsOf, type InjectedCredentials } from "./injected.js";
import { makeDirectory } from "../contract/directory.js";

export const AUTH_FILE_NAME = "auth.json";
/** How errors and summaries name an injected-only host's in-memory slot (it is no file). */
export const INJECTED_LOCATION = "(injected credentials)";
export const AUTH_CONTENT_VARIABLE = "ZE_HARNESS_AUTH_CONTENT";
/**
 * An absolute path replacing `<stateDirectory>/auth.json`. The embedded SDK's `authFilePath` sets
 * it in the host's own environment object, so every reader and writer of the file agrees.
 */
export const AUTH_FILE_VARIABLE = "ZE_HARNESS_AUTH_FILE";

/**
 * Connection metadata Ze keeps beside opencode's fields (opencode ignores unknown fields): the
 * connection's identity, label and times. Entries written by another tool have none; their
 * connection is then `auth:<providerId>`, labelled with the provider ID.
 */
export interface ConnectionMetadata {
  readonly connectionId?: string;
  readonly label?: string;
  readonly createdAt?: number;
  readonly updatedAt?: number;
}

/** An API key connection. */
export interface ApiAuthEntry extends ConnectionMetadata {
  readonly type: "api";
  readonly key: string;
}

/** An OAuth login (`expires` in epoch milliseconds). */
export interface OAuthAuthEntry extends ConnectionMetadata {
  readonly type: "oauth";
  readonly access: string;
  readonly refresh: string;
  readonly expires: number;
  readonly accountId?: string;
  readonly enterpriseUrl?: string;
  /** The token endpoint recorded with the login: refreshes go there (refresh_token grant). */
  readonly tokenEndpoint?: string;
  /** The OAuth client the login used (sent with a refresh). */
  readonly clientId?: string;
  /** The login method that created it (`device`, `chatgpt`). */
  readonly login?: string;
  /** The provider rejected the refresh token: no more refreshes until the next login. */
  readonly refreshRejected?: boolean;
}

/** A well-known-endpoint login: a key plus the token it exchanged for. */
export interface WellKnownAuthEntry {
  readonly type: "wellknown";
  readonly key: string;
  readonly token: string;
}

export type AuthEntry = ApiAuthEntry | OAuthAuthEntry | WellKnownAuthEntry;

/** The parsed file: valid entries by provider ID, plus when it last changed. */
export interface AuthState {
  readonly entries: Readonly<Record<string, AuthEntry>>;
  /** The file's modification time (ms); 0 when absent or supplied by the environment. */
  readonly modifiedAt: number;
  /** The file exists (or the environment supplies content). */
  readonly present: boolean;
}

/** The file (or `ZE_HARNESS_AUTH_CONTENT`) is not a JSON object. Connection operations fail; it is never overwritten. */
export interface AuthFileInvalid {
  readonly _tag: "AuthFileInvalid";
  readonly file: string;
  readonly message: string;
}

/** The file could not be read or written (permissions, disk). */
export interface AuthFileUnavailable {
  readonly _tag: "AuthFileUnavailable";
  readonly file: string;
  readonly message: string;
}

/** Writes are refused while `ZE_HARNESS_AUTH_CONTENT` supplies the content. */
export interface AuthFileReadOnly {
  readonly _tag: "AuthFileReadOnly";
  readonly file: string;
  readonly message: string;
}

export type AuthFileError = AuthFileInvalid | AuthFileUnavailable | AuthFileReadOnly;
export type AuthResult<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: AuthFileError };

/** Where `auth.json` is, and whether the environment overrides its content. */
export interface AuthFileLocation {
  readonly path: string;
  /** `ZE_HARNESS_AUTH_CONTENT`, when set: read instead of the file, and writes are refused. */
  readonly content?: string;
  /** An injected-only host's in-memory slot (injected.ts): read and written instead of any file. */
  readonly memory?: InjectedCredentials;
}

function defaultAuthPath(env: Env): string {
  const override = env[AUTH_FILE_VARIABLE];
  return override !== undefined && isAbsolute(override) ? override : join(stateDirectory(env), AUTH_FILE_NAME);
}

/** `<stateDirectory>/auth.json` (or `ZE_HARNESS_AUTH_FILE`), honouring `ZE_HARNESS_AUTH_CONTENT`. */
export function authFileLocation(env: Env, path: string = defaultAuthPath(env)): AuthFileLocation {
  const memory = injectedCredentialsOf(env);
  if (memory !== undefined) return { path: INJECTED_LOCATION, memory };
  const content = env[AUTH_CONTENT_VARIABLE];
  return content !== undefined && content !== "" ? { path, content } : { path };
}

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value);
const nonEmpty = (value: unknown): value is string => typeof value === "string" && value.length > 0;

const finite = (value: unknown): value is number => typeof value === "number" && Number.isFinite(value);

function metadataOf(value: Json): ConnectionMetadata {
  return {
    ...(nonEmpty(value["connectionId"]) && value["connectionId"].length <= 128 ? { connectionId: value["connectionId"] } : {}),
    ...(typeof value["label"] === "string" && value["label"].length <= 256 ? { label: value["label"] } : {}),
    ...(finite(value["createdAt"]) ? { createdAt: value["createdAt"] } : {}),
    ...(finite(value["updatedAt"]) ? { updatedAt: value["updatedAt"] } : {}),
  };
}

/** One entry in opencode's shape, or undefined when it is not one (such an entry is ignored, and kept on rewrite). */
export function parseAuthEntry(value: unknown): AuthEntry | undefined {
  if (!isObject(value)) return undefined;
  if (value["type"] === "api" && nonEmpty(value["key"])) return { type: "api", key: value["key"], ...metadataOf(value) };
  if (value["type"] === "wellknown" && nonEmpty(value["key"]) && nonEmpty(value["token"])) {
    return { type: "wellknown", key: value["key"], token: value["token"] };
  }
  if (
    value["type"] === "oauth" &&
    nonEmpty(value["access"]) &&
    typeof value["refresh"] === "string" &&
    typeof value["expires"] === "number" &&
    Number.isFinite(value["expires"])
  ) {
    return {
      type: "oauth",
      access: value["access"],
      refresh: value["refresh"],
      expires: value["expires"],
      ...(nonEmpty(value["accountId"]) ? { accountId: value["accountId"] } : {}),
      ...(nonEmpty(value["enterpriseUrl"]) ? { enterpriseUrl: value["enterpriseUrl"] } : {}),
      ...(nonEmpty(value["tokenEndpoint"]) ? { tokenEndpoint: value["tokenEndpoint"] } : {}),
      ...(nonEmpty(value["clientId"]) ? { clientId: value["clientId"] } : {}),
      ...(nonEmpty(value["login"]) ? { login: value["login"] } : {}),
      ...(value["refreshRejected"] === true ? { refreshRejected: true } : {}),
      ...metadataOf(value),
    };
  }
  return undefined;
}

function invalid(file: string, message: string): AuthResult<never> {
  return { ok: false, error: { _tag: "AuthFileInvalid", file, message } };
}

const errorCode = (error: unknown): string | undefined =>
  isObject(error) && typeof error["code"] === "string" ? error["code"] : undefined;

/** The raw JSON object of the file (`{}` when absent), or a typed error. Never includes values in messages. */
/**
 * The last read of each auth file, keyed by path and valid while the file's identity, size and
 * modification time are unchanged: every model request re-checks the file (a key connected later
 * is used without a restart) with one stat instead of a read and a parse. Writes go through a
 * rename, which changes the identity.
 */
const lastRead = new Map<string, { readonly key: string; readonly text: string; readonly modifiedAt: number }>();

function readFileCached(path: string): { text: string; modifiedAt: number } | undefined {
  const info = statSync(path, { throwIfNoEntry: false });
  if (info === undefined) {
    lastRead.delete(path);
    return undefined;
  }
  const key = `${info.dev}:${info.ino}:${info.size}:${info.mtimeMs}`;
  const cached = lastRead.get(path);
  if (cached?.key === key) return cached;
  const read = { key, text: readFileSync(path, "utf8"), modifiedAt: Math.floor(info.mtimeMs) };
  lastRead.set(path, read);
  return read;
}

async function readRaw(location: AuthFileLocation): AuthResultPromise<{ raw: Json; modifiedAt: number; present: boolean }> {
  if (location.memory !== undefined) {
    const read = location.memory.read();
    return { ok: true, value: { raw: read.raw, modifiedAt: read.modifiedAt, present: true } };
  }
  let text: string;
  let modifiedAt = 0;
  if (location.content !== undefined) {
    text = location.content;
  } else {
    try {
      const read = readFileCached(location.path);
      if (read === undefined) return { ok: true, value: { raw: {}, modifiedAt: 0, present: false } };
      text = read.text;
      modifiedAt = read.modifiedAt;
    } catch (error) {
      if (errorCode(error) === "ENOENT") return { ok: true, value: { raw: {}, modifiedAt: 0, present: false } };
      return {
        ok: false,
        error: { _tag: "AuthFileUnavailable", file: location.path, message: `cannot read the auth file (${errorCode(error) ?? "error"})` },
      };
    }
  }
  const source = location.content !== undefined ? AUTH_CONTENT_VARIABLE : "the auth file";
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return invalid(location.path, `${source} is not valid JSON`);
  }
  if (!isObject(parsed)) return invalid(location.path, `${source} is not a JSON object`);
  return { ok: true, value: { raw: parsed, modifiedAt, present: true } };
}

type AuthResultPromise<T> = Promise<AuthResult<T>>;

/** Reads the stored connections. A missing file is an empty state, not an error. */
export async function readAuthFile(location: AuthFileLocation): AuthResultPromise<AuthState> {
  const read = await readRaw(location);
  if (!read.ok) return read;
  const entries: Record<string, AuthEntry> = {};
  for (const [providerId, value] of Object.entries(read.value.raw)) {
    const entry = parseAuthEntry(value);
    if (entry !== undefined) entries[providerId] = entry;
  }
  return { ok: true, value: { entries, modifiedAt: read.value.modifiedAt, present: read.value.present } };
}

/** Writes `data` as the whole file, atomically, creating it (and its 0700 directory) with mode 0600. */
export async function writeAuthFileAtomic(path: string, data: Readonly<Record<string, unknown>>): AuthResultPromise<void> {
  const directory = dirname(path);
  const temporary = join(directory, `.${AUTH_FILE_NAME}.${process.pid}.${randomUUID()}.tmp`);
  try {
    await makeDirectory(directory, 0o700);
    const handle = await open(temporary, "wx", 0o600);
    try {
      await handle.writeFile(`${JSON.stringify(data, null, 2)}\n`, "utf8");
      await handle.sync();
    } finally {
      await handle.close();
    }
    // The creation mode is masked by the umask; set it exactly.
    await chmod(temporary, 0o600);
    await rename(temporary, path);
    return { ok: true, value: undefined };
  } catch (error) {
    await unlink(temporary).catch(() => undefined);
    return {
      ok: false,
      error: { _tag: "AuthFileUnavailable", file: path, message: `cannot write the auth file (${errorCode(error) ?? "error"})` },
    };
  }
}

/** Writes to one file from this process run one at a time (concurrent connection writes are serialized). */
const writeQueues = new Map<string, Promise<unknown>>();

function serialized<T>(path: string, task: () => Promise<T>): Promise<T> {
  const previous = writeQueues.get(path) ?? Promise.resolve();
  const next = previous.then(task, task);
  const settled = next.then(
    () => undefined,
    () => undefined,
  );
  writeQueues.set(path, settled);
  void settled.then(() => {
    if (writeQueues.get(path) === settled) writeQueues.delete(path);
  });
  return next;
}

function update(location: AuthFileLocation, change: (raw: Json) => void): AuthResultPromise<void> {
  return serialized(location.path, () => updateNow(location, change));
}

/**
 * Reads one provider's entry and replaces it with what `change` returns (`undefined` removes it,
 * `"keep"` writes nothing), in one serialized step. Resolves with what `change` saw.
 */
export function updateAuthEntry(
  location: AuthFileLocation,
  providerId: string,
  change: (current: AuthEntry | undefined) => AuthEntry | undefined | "keep",
): AuthResultPromise<AuthEntry | undefined> {
  return serialized(location.path, async (): AuthResultPromise<AuthEntry | undefined> => {
    if (location.content !== undefined) return readOnly(location);
    const read = await readRaw(location);
    if (!read.ok) return read;
    const current = Object.hasOwn(read.value.raw, providerId) ? parseAuthEntry(read.value.raw[providerId]) : undefined;
    const next = change(current);
    if (next === "keep") return { ok: true, value: current };
    const raw = { ...read.value.raw };
    if (next === undefined) delete raw[providerId];
    else raw[providerId] = next;
    if (location.memory !== undefined) {
      location.memory.replace(raw);
      return { ok: true, value: current };
    }
    const written = await writeAuthFileAtomic(location.path, raw);
    return written.ok ? { ok: true, value: current } : written;
  });
}

function readOnly(location: AuthFileLocation): AuthResult<never> {
  return {
    ok: false,
    error: { _tag: "AuthFileReadOnly", file: location.path, message: `${AUTH_CONTENT_VARIABLE} supplies the stored connections; they cannot be changed` },
  };
}

async function updateNow(location: AuthFileLocation, change: (raw: Json) => void): AuthResultPromise<void> {
  if (location.content !== undefined) {
    return {
      ok: false,
      error: { _tag: "AuthFileReadOnly", file: location.path, message: `${AUTH_CONTENT_VARIABLE} supplies the stored connections; they cannot be changed` },
    };
  }
  // Re-read right before writing so a change another process made is kept (last writer wins per entry set).
  const read = await readRaw(location);
  if (!read.ok) return read;
  const raw = { ...read.value.raw };
  change(raw);
  if (location.memory !== undefined) {
    location.memory.replace(raw);
    return { ok: true, value: undefined };
  }
  return writeAuthFileAtomic(location.path, raw);
}

/** Stores (replaces) one provider's connection; other entries, even ones this build does not understand, are kept. */
export function setAuthEntry(location: AuthFileLocation, providerId: string, entry: AuthEntry): AuthResultPromise<void> {
  return update(location, (raw) => {
    raw[providerId] = entry;
  });
}

/** Removes one provider's connection (a no-op write when there is none). */
export function removeAuthEntry(location: AuthFileLocation, providerId: string): AuthResultPromise<void> {
  return update(location, (raw) => {
    delete raw[providerId];
  });
}

/**
 * The raw value stored under `key`, undefined when there is none. For entries outside opencode's
 * provider shape (MCP OAuth credentials under `mcp:<reference>`), which `readAuthFile` ignores.
 */
export async function readAuthValue(location: AuthFileLocation, key: string): AuthResultPromise<unknown> {
  const read = await readRaw(location);
  if (!read.ok) return read;
  return { ok: true, value: Object.hasOwn(read.value.raw, key) ? read.value.raw[key] : undefined };
}

/** Replaces the raw value under `key` (undefined removes it), keeping every other entry. */
export function setAuthValue(location: AuthFileLocation, key: string, value: unknown): AuthResultPromise<void> {
  return update(location, (raw) => {
    if (value === undefined) delete raw[key];
    else raw[key] = value;
  });
}
