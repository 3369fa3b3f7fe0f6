// The daemon's registration (`server.json`: `{id, version, url, pid}`, mode 0600) and its bearer
// secret (`daemon-token`, mode 0600). A daemon registers after its listener binds; the first
// registration wins (an exclusive link), a live registration is never replaced, a dead one
// (its pid gone) is. Whoever removes a registration removes only the one it means (by id).
import { randomBytes } from "node:crypto";
import { chmodSync, linkSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { processAlive } from "../contract/process.js";

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

export function ensureDirectory(directory: string): void {
  mkdirSync(directory, { recursive: true, mode: 0o700 });
}

export type ClaimResult = { readonly ok: true } | { readonly ok: false; readonly holder: Registration };

/**
 * Registers `registration` unless a live daemon is registered already (then it is the holder and
 * the caller, a racing spawner that lost, terminates itself). A registration whose pid is gone,
 * or an unreadable file, is replaced.
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
      if (holder !== undefined && holder.id !== registration.id && processAlive(holder.pid)) return { ok: false, holder };
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

/** The shared bearer secret, created (0600, 32 random bytes) by the first daemon that needs one. */
export function readOrCreateToken(file: string): string {
  ensureDirectory(dirname(file));
  const existing = readToken(file);
  if (existing !== undefined) return existing;
  // Written whole, then linked into place: a reader never sees a half-written secret.
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, `${randomBytes(32).toString("base64url")}\n`, { mode: 0o600 });
  try {
    linkSync(temporary, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  } finally {
    rmSync(temporary, { force: true });
  }
  const token = readToken(file);
  if (token === undefined) throw new Error(`${file} holds no token`);
  return token;
}

export function readToken(file: string): string | undefined {
  try {
    const token = readFileSync(file, "utf8").trim();
    return token === "" ? undefined : token;
  } catch {
    return undefined;
  }
}
