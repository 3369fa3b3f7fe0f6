// Where a native installation lives (reference "Install") and its install record: the launcher
// (~/.ze-harness/bin/ze-harness, or --dir) is a symlink to the active version's executable under
// ${XDG_DATA_HOME:-~/.local/share}/ze-harness/versions/<version>/; beside them install.json (the
// channel or pin, the version, the last accepted pointer sequence and the highest one per channel,
// the launcher path, the origin),
// release-cert.pem (the certificate the installer verified with: update's trust anchor) and
// staged.json (a verified release waiting for `service restart`). The same directory holds the
// daemon's state (services/daemon/paths.ts), which uninstall keeps unless asked.
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { daemonDirectory, type Env } from "../daemon/paths.js";
import { VERSION } from "./verify.js";

export type { Env } from "../daemon/paths.js";

export interface InstallPaths {
  readonly data: string;
  readonly versions: string;
  readonly record: string;
  readonly staged: string;
  readonly cert: string;
}

export interface InstallRecord {
  readonly channel: "stable" | "dev" | null;
  readonly pin: string | null;
  readonly version: string;
  /** The highest channel-pointer sequence accepted here: an older pointer is a replay. */
  readonly sequence: number;
  /**
   * The highest sequence ever accepted on each channel, kept across channel switches and pins
   * (install.sh --channel dev, then --channel stable again must not take a replayed older pointer).
   */
  readonly stableSequence: number;
  readonly devSequence: number;
  readonly launcher: string;
  readonly origin: string;
  /** Background update checks (`update --auto on|off`). */
  readonly auto: boolean;
}

/** A verified release waiting for the daemon's Turns to finish. */
export interface StagedRelease {
  readonly version: string;
  readonly sha256: string;
}

export function installPaths(env: Env): InstallPaths {
  const data = daemonDirectory(env);
  return { data, versions: join(data, "versions"), record: join(data, "install.json"), staged: join(data, "staged.json"), cert: join(data, "release-cert.pem") };
}

export const executableOf = (paths: InstallPaths, version: string): string => join(paths.versions, version, "ze-harness");

export const PLATFORM = `${process.platform === "darwin" ? "darwin" : process.platform === "win32" ? "windows" : "linux"}-${process.arch === "arm64" ? "arm64" : "x64"}`;

function readJson(file: string): unknown {
  if (!existsSync(file)) return undefined;
  try {
    return JSON.parse(readFileSync(file, "utf8")) as unknown;
  } catch {
    return undefined;
  }
}

export function readRecord(paths: InstallPaths): InstallRecord | undefined {
  const value = readJson(paths.record) as Partial<InstallRecord> | undefined;
  if (typeof value?.version !== "string" || typeof value.launcher !== "string" || typeof value.origin !== "string") return undefined;
  const channel = value.channel === "stable" || value.channel === "dev" ? value.channel : null;
  const sequence = typeof value.sequence === "number" ? value.sequence : 0;
  // An older installer's record knows only its own channel's sequence.
  const seen = (name: "stable" | "dev", stored: unknown): number => Math.max(typeof stored === "number" ? stored : 0, channel === name ? sequence : 0);
  return {
    channel,
    pin: typeof value.pin === "string" ? value.pin : null,
    version: value.version,
    sequence,
    stableSequence: seen("stable", value.stableSequence),
    devSequence: seen("dev", value.devSequence),
    launcher: value.launcher,
    origin: value.origin,
    auto: value.auto === true,
  };
}

/** Written whole, then renamed over the old one: a reader never sees half a file. */
export function writeJsonAtomically(file: string, value: unknown): void {
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(value, null, 2)}\n`, { mode: 0o644 });
  renameSync(temporary, file);
}

export const writeRecord = (paths: InstallPaths, record: InstallRecord): void => writeJsonAtomically(paths.record, record);

/** The highest pointer sequence accepted on `channel` at this installation (whatever it follows now). */
export const seenSequence = (record: InstallRecord, channel: "stable" | "dev"): number => (channel === "stable" ? record.stableSequence : record.devSequence);

/**
 * staged.json as update wrote it: a plain release version (a name under versions/, never a path
 * such as `9/../../elsewhere`) and a SHA-256; anything else is no staged release.
 */
export function readStaged(paths: InstallPaths): StagedRelease | undefined {
  const value = readJson(paths.staged) as Partial<StagedRelease> | undefined;
  if (typeof value?.version !== "string" || !VERSION.test(value.version) || typeof value.sha256 !== "string" || !/^[0-9a-f]{64}$/.test(value.sha256)) return undefined;
  return { version: value.version, sha256: value.sha256 };
}

export const clearStaged = (paths: InstallPaths): void => rmSync(paths.staged, { force: true });
