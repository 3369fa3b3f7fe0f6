// The daemon's registration (`server.json`: `{id, version, url, pid}`, mode 0600) and its bearer
// secret (`daemon-token`, mode 0600). A daemon registers after its listener binds; the first
// registration wins (an exclusive link), a live registration is never replaced, a stale one is:
// its pid gone, or a process of another user (who may have waited for the freed pid). Every
// daemon that wins a registration writes a new token, so a token that ever leaked dies with the
// registration it was minted for. Whoever removes a registration removes only the one it means (by id).
import { randomBytes } from "node:crypto";
import { chmodSync, linkSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { processOwned } from "../contract/process.js";
import { makeDirectorySync } from "../contract/directory.js";

export interface Registration {
  readonly id: string;
  readonly version: string;
  readonly url: string;
  readonly pid: number;
}

const isRegistration = (value: unknown): value is Registration => {
  const record = value as Partial<Registration> | null;
  return (
    typeof record === "object" && record !== null &&
    typeof record.id === "string" && typeof record.version === "string" && typeof record.url === "string" &&
    typeof record.pid === "number" && Number.isInteger(record.pid) && record.pid > 0
  );
};

/** The registration on file, or undefined when there is none (or it is not one: a torn or foreign file). */
export function readRegistration(file: string): Registration | undefined {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
  try {
    const parsed = JSON.parse(text) as unknown;
    return isRegistration(parsed) ? { id: parsed.id, version: parsed.version, url: parsed.url, pid: parsed.pid } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The state directory, created 0700. One that exists already must be this user's (another user's
 * directory could hand us their `server.json` and learn our token); group or other access is removed.
 */
export function ensureDirectory(directory: string): void {
  makeDirectorySync(directory, 0o700);
  const uid = typeof process.geteuid === "function" ? process.geteuid() : undefined;
  if (uid === undefined) return;
  const stat = statSync(directory);
  if (stat.uid !== uid) throw Object.assign(new Error(`the state directory ${directory} belongs to another user (uid ${stat.uid})`), { _tag: "DaemonStateForeign" });
  if ((stat.mode & 0o077) !== 0) chmodSync(directory, 0o700);
}

export type ClaimResult = { readonly ok: true } | { readonly ok: false; readonly holder: Registration };

/**
 * Registers `registration` unless a live daemon is registered already (then it is the holder and
 * the caller, a racing spawner that lost, terminates itself). A registration whose pid is gone or
 * not this user's, or an unreadable file, is replaced.
 */
export function claimRegistration(file: string, registration: Registration): ClaimResult {
  ensureDirectory(dirname(file));
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(registration)}\n`, { mode: 0o600 });
  chmodSync(temporary, 0o600);
  try {
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        linkSync(temporary, file);
        return { ok: true };
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      }
      const holder = readRegistration(file);
      if (holder !== undefined && holder.id !== registration.id && processOwned(holder.pid)) return { ok: false, holder };
      // Stale (its process is gone) or not a registration: replace it atomically.
      renameSync(temporary, file);
      return { ok: true };
    }
    throw new Error(`could not register in ${file}`);
  } finally {
    rmSync(temporary, { force: true });
  }
}

/** Removes the registration when it is still `id`'s; true when it did. */
export function removeRegistration(file: string, id: string): boolean {
  const current = readRegistration(file);
  if (current === undefined || current.id !== id) return false;
  rmSync(file, { force: true });
  return true;
}

/** Removes a registration judged stale, unless another one took its place meanwhile. */
export function removeStaleRegistration(file: string, stale: Registration): void {
  const current = readRegistration(file);
  if (current !== undefined && current.id === stale.id && current.pid === stale.pid) rmSync(file, { force: true });
}

/** A new bearer secret: 32 random bytes, base64url. */
export const newToken = (): string => randomBytes(32).toString("base64url");

/** Replaces the bearer secret (0600): written whole, then renamed into place, so a reader never sees half of one. */
export function writeToken(file: string, token: string): void {
  ensureDirectory(dirname(file));
  const temporary = `${file}.${process.pid}.tmp`;
  try {
    writeFileSync(temporary, `${token}\n`, { mode: 0o600, flag: "w" });
    chmodSync(temporary, 0o600);
    renameSync(temporary, file);
  } finally {
    rmSync(temporary, { force: true });
  }
}

export function readToken(file: string): string | undefined {
  try {
    const token = readFileSync(file, "utf8").trim();
    return token === "" ? undefined : token;
  } catch {
    return undefined;
  }
}
