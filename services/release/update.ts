// `ze-harness update`: check the signed channel pointer, verify and stage the release it names
// (versions/<version>/, its manifest and archive checked first), then switch the launcher and hand
// the local daemon off when it is idle; with running Turns the release stays staged (staged.json)
// and the daemon unchanged until `service restart` activates it (takeStaged). The new executable
// restarts the daemon itself (`service restart --if-idle`): a daemon runs the executable that
// started it. Pins stay pinned; a pointer that does not advance installs nothing. `update --stage`
// (stageUpdate: the daemon's background checks, services/release/background.ts) verifies and
// stages only.
import { spawnSync, execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { compareReleases, daemonStatus } from "../daemon/client.js";
import { clearStaged, executableOf, installPaths, PLATFORM, readRecord, readStaged, seenSequence, writeJsonAtomically, writeRecord, type Env, type InstallPaths, type InstallRecord } from "./layout.js";
import { archiveFor, ReleaseError, verifyArchive, verifyManifest, verifyPointer, type Pointer } from "./verify.js";
import { makeDirectorySync } from "../contract/directory.js";

interface Installation {
  readonly paths: InstallPaths;
  readonly record: InstallRecord;
  readonly certificate: string;
}

function installation(env: Env): Installation {
  const paths = installPaths(env);
  const record = readRecord(paths);
  if (record === undefined) {
    throw new ReleaseError("NotInstalled", `no native installation here (${paths.record} is missing): install with install.sh; Homebrew and WinGet installs update with their package manager`);
  }
  if (!existsSync(paths.cert)) throw new ReleaseError("NotInstalled", `the release certificate ${paths.cert} is missing: reinstall with install.sh`);
  return { paths, record, certificate: readFileSync(paths.cert, "utf8") };
}

/** A pointer, a manifest or a signature is small: a mirror answering with more is not believed. */
const METADATA_LIMIT = 1024 * 1024;

/**
 * `origin/path`, read up to `limit` bytes: a hostile mirror's endless or oversized answer is cut
 * off there (an archive's limit is the size its signed manifest gives) instead of filling memory.
 */
async function download(origin: string, path: string, limit = METADATA_LIMIT): Promise<Uint8Array> {
  const tooLarge = (): ReleaseError => new ReleaseError("ReleaseVerificationFailed", `${origin}/${path} is larger than the ${limit} bytes expected; nothing was installed`);
  const unavailable = (error: unknown): ReleaseError =>
    new ReleaseError("ReleaseUnavailable", `cannot download ${origin}/${path}: ${(error as { cause?: { code?: string } }).cause?.code ?? String(error)}`);
  let response: Response;
  try {
    response = await fetch(`${origin}/${path}`, { signal: AbortSignal.timeout(120_000) });
  } catch (error) {
    throw unavailable(error);
  }
  if (!response.ok) throw new ReleaseError("ReleaseUnavailable", `cannot download ${origin}/${path}: HTTP ${response.status}`);
  if (Number(response.headers.get("content-length") ?? 0) > limit) {
    await response.body?.cancel();
    throw tooLarge();
  }
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = response.body?.getReader();
  try {
    for (;;) {
      const next = await reader?.read();
      if (next === undefined || next.done) break;
      total += next.value.length;
      if (total > limit) {
        await reader?.cancel();
        throw tooLarge();
      }
      chunks.push(next.value);
    }
  } catch (error) {
    throw error instanceof ReleaseError ? error : unavailable(error);
  }
  return Buffer.concat(chunks, total);
}

async function latestPointer(install: Installation, channel: "stable" | "dev"): Promise<Pointer> {
  const text = Buffer.from(await download(install.record.origin, `channels/${channel}.json`)).toString("utf8");
  return verifyPointer(text, install.certificate, channel, seenSequence(install.record, channel));
}

export interface CheckResult {
  readonly installed: string;
  readonly channel: string | null;
  readonly pin: string | null;
  readonly latest: string;
  readonly updateAvailable: boolean;
  readonly staged: string | null;
}

/** `update --check`: the verified pointer against the installed version; nothing is written. */
export async function checkForUpdate(env: Env): Promise<CheckResult> {
  const install = installation(env);
  const { record } = install;
  const staged = readStaged(install.paths)?.version ?? null;
  if (record.channel === null) return { installed: record.version, channel: null, pin: record.pin, latest: record.version, updateAvailable: false, staged };
  const pointer = await latestPointer(install, record.channel);
  return { installed: record.version, channel: record.channel, pin: null, latest: pointer.version, updateAvailable: compareReleases(pointer.version, record.version) > 0, staged };
}

/** `update --auto on|off`: background checks for a channel install. */
export function setAuto(env: Env, on: boolean): InstallRecord {
  const install = installation(env);
  const record = { ...install.record, auto: on };
  writeRecord(install.paths, record);
  return record;
}

/** The launcher pointed at `version` (a new symlink renamed over the old one), the record following. */
function activate(paths: InstallPaths, record: InstallRecord, version: string): InstallRecord {
  const temporary = `${record.launcher}.${process.pid}.new`;
  rmSync(temporary, { force: true });
  symlinkSync(executableOf(paths, version), temporary);
  renameSync(temporary, record.launcher);
  const next = { ...record, version };
  writeRecord(paths, next);
  clearStaged(paths);
  return next;
}

/** The version install.json names now (another process may have changed it since this one read it). */
const activeVersion = (paths: InstallPaths): string | undefined => readRecord(paths)?.version;

/** The verified archive unpacked to versions/<version>/ (through a partial directory, renamed at the end). */
function unpack(paths: InstallPaths, version: string, name: string, bytes: Uint8Array): void {
  makeDirectorySync(paths.versions);
  // Per process: a background check and an `update` may unpack the same release at once.
  const work = join(paths.versions, `.${version}.partial-${process.pid}`);
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work);
  try {
    const archive = join(work, name);
    writeFileSync(archive, bytes);
    execFileSync("tar", ["-xzf", archive, "-C", work], { stdio: ["ignore", "ignore", "pipe"] });
    const unpacked = join(work, `ze-harness-${version}-${PLATFORM}`);
    if (!existsSync(join(unpacked, "ze-harness"))) throw new ReleaseError("ReleaseVerificationFailed", `${name} holds no ze-harness executable; nothing was installed`);
    // An `update` that ran meanwhile activated this version: its folder is in use, not replaced.
    if (activeVersion(paths) === version) return;
    rmSync(join(paths.versions, version), { recursive: true, force: true });
    renameSync(unpacked, join(paths.versions, version));
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

export interface UpdateResult {
  readonly updated: boolean;
  readonly from: string;
  readonly version: string;
  /** A release verified and waiting for `service restart` (the daemon had running Turns). */
  readonly staged: string | null;
  readonly daemon: "none" | "restarted" | "unchanged";
}

/**
 * The pointer's sequence accepted into the record as it is NOW (read again: a background check and
 * an `update` may run at once, and one must not write back the version the other replaced).
 */
function acceptSequence(paths: InstallPaths, fallback: InstallRecord, sequence: number): InstallRecord {
  const current = readRecord(paths) ?? fallback;
  if (current.channel !== fallback.channel || current.channel === null || current.sequence >= sequence) return current;
  const next = { ...current, sequence, ...(current.channel === "stable" ? { stableSequence: Math.max(current.stableSequence, sequence) } : { devSequence: Math.max(current.devSequence, sequence) }) };
  writeRecord(paths, next);
  return next;
}

/** A newer channel release, verified and unpacked to versions/<version>/ (or the verified staged copy reused). */
interface Prepared {
  readonly version: string;
  readonly sha256: string;
  /** The record with the pointer's sequence accepted. */
  readonly accepted: InstallRecord;
}

/**
 * The channel's release when it is newer than the installed one: pointer, manifest and archive
 * verified, unpacked; undefined (the pointer's sequence accepted, a stale staged copy discarded)
 * when the installation is up to date.
 */
async function prepare(install: Installation, channel: "stable" | "dev"): Promise<Prepared | undefined> {
  const { paths, record } = install;
  const pointer = await latestPointer(install, channel);
  if (compareReleases(pointer.version, record.version) <= 0) {
    acceptSequence(paths, record, pointer.sequence);
    const staged = readStaged(paths);
    if (staged !== undefined && compareReleases(staged.version, record.version) <= 0) clearStaged(paths);
    return undefined;
  }
  const release = `releases/v${pointer.version}`;
  const manifest = verifyManifest(await download(record.origin, `${release}/manifest.json`), Buffer.from(await download(record.origin, `${release}/manifest.json.sig`)).toString("utf8"), install.certificate, pointer.version, pointer.manifestSha256);
  const archive = archiveFor(manifest, PLATFORM);
  // A background check and an `update` may run at once: the other may have activated it by now.
  const now = activeVersion(paths);
  if (now !== undefined && compareReleases(pointer.version, now) <= 0) return undefined;
  const staged = readStaged(paths);
  // Repeated update commands reuse a verified staged copy of the same release.
  if (!(staged?.version === pointer.version && staged.sha256 === archive.sha256 && existsSync(executableOf(paths, pointer.version)))) {
    const bytes = await download(record.origin, `${release}/${archive.name}`, archive.size);
    verifyArchive(bytes, archive);
    unpack(paths, pointer.version, archive.name, bytes);
  }
  return { version: pointer.version, sha256: archive.sha256, accepted: acceptSequence(paths, record, pointer.sequence) };
}

/** `update`: see the file's head. `notice` gets the lines for the user (stderr). */
export async function runUpdate(env: Env, notice: (line: string) => void): Promise<UpdateResult> {
  const install = installation(env);
  const { paths, record } = install;
  if (record.channel === null) {
    notice(`Ze Harness is pinned to ${record.pin ?? record.version}; rerun the installer with --version or --channel to change versions.`);
    return { updated: false, from: record.version, version: record.version, staged: null, daemon: "unchanged" };
  }
  const prepared = await prepare(install, record.channel);
  if (prepared === undefined) {
    const current = activeVersion(paths) ?? record.version;
    notice(`Ze Harness ${current} is up to date (${record.channel} channel).`);
    return { updated: false, from: record.version, version: current, staged: null, daemon: "unchanged" };
  }
  const { version, accepted } = prepared;
  const daemon = await daemonStatus(env);
  if (daemon.running && daemon.runningTurns.length > 0) {
    writeJsonAtomically(paths.staged, { version, sha256: prepared.sha256 });
    const turns = daemon.runningTurns.length === 1 ? "1 running Turn" : `${daemon.runningTurns.length} running Turns`;
    notice(`Staged Ze Harness ${version}. The local daemon has ${turns}, so it stays unchanged on ${daemon.version}: run \`ze-harness service restart\` once they finish.`);
    return { updated: false, from: record.version, version: record.version, staged: version, daemon: "unchanged" };
  }
  activate(paths, accepted, version);
  notice(`Updated Ze Harness from ${record.version} to ${version}.`);
  if (!daemon.running) return { updated: true, from: record.version, version, staged: null, daemon: "none" };
  // The new executable restarts the daemon itself: only while it is idle (a Turn may have started since).
  const restart = spawnSync(executableOf(paths, version), ["service", "restart", "--if-idle"], { env: env as NodeJS.ProcessEnv, stdio: ["ignore", "pipe", "inherit"], encoding: "utf8" });
  const restarted = restart.status === 0 && (JSON.parse(restart.stdout || "{}") as { restarted?: boolean }).restarted === true;
  if (restarted) notice(`Local daemon updated from ${daemon.version} to ${version}.`);
  else notice(`The local daemon stays on ${daemon.version}: run \`ze-harness service restart\` once its Turns finish.`);
  return { updated: true, from: record.version, version, staged: null, daemon: restarted ? "restarted" : "unchanged" };
}

export interface StageResult {
  readonly installed: string;
  readonly channel: string | null;
  readonly pin: string | null;
  /** The verified release waiting for `update` or `service restart`, or null. */
  readonly staged: string | null;
}

/**
 * `update --stage` (what background checks run, in a process of their own): the channel's newer
 * release verified and staged, nothing switched — neither the launcher nor the daemon. A pin
 * stages nothing; an up-to-date installation discards a stale staged copy.
 */
export async function stageUpdate(env: Env, notice: (line: string) => void): Promise<StageResult> {
  const install = installation(env);
  const { paths, record } = install;
  if (record.channel === null) {
    notice(`Ze Harness is pinned to ${record.pin ?? record.version}; nothing to stage.`);
    return { installed: record.version, channel: null, pin: record.pin, staged: null };
  }
  const prepared = await prepare(install, record.channel);
  if (prepared === undefined) {
    notice(`Ze Harness ${record.version} is up to date (${record.channel} channel).`);
    return { installed: record.version, channel: record.channel, pin: null, staged: null };
  }
  // An `update` (or the installer) that ran meanwhile may have activated it or pinned the
  // installation: then there is nothing to stage.
  if (prepared.accepted.channel !== record.channel || compareReleases(prepared.version, prepared.accepted.version) <= 0) {
    notice(`Ze Harness ${prepared.accepted.version} is up to date (${record.channel} channel).`);
    return { installed: prepared.accepted.version, channel: record.channel, pin: null, staged: null };
  }
  writeJsonAtomically(paths.staged, { version: prepared.version, sha256: prepared.sha256 });
  notice(`Staged Ze Harness ${prepared.version}: run \`ze-harness update\` when current work finishes to switch the launcher and the local daemon to it.`);
  return { installed: record.version, channel: record.channel, pin: null, staged: prepared.version };
}

/**
 * `service restart`'s first step: a staged release newer than the installed one is activated
 * (the launcher switched) and its executable returned, for the restart to run from it; a staged
 * release the installation already matches or passes, or one staged for a now pinned
 * installation, is discarded.
 */
export function takeStaged(env: Env): { readonly version: string; readonly executable: string } | undefined {
  const paths = installPaths(env);
  const staged = readStaged(paths);
  if (staged === undefined) return undefined;
  const record = readRecord(paths);
  // A pin holds: a background check that staged before the installer pinned may have written its
  // staged.json after the installer cleared it.
  if (record === undefined || record.channel === null || compareReleases(staged.version, record.version) <= 0 || !existsSync(executableOf(paths, staged.version))) {
    clearStaged(paths);
    return undefined;
  }
  activate(paths, record, staged.version);
  return { version: staged.version, executable: executableOf(paths, staged.version) };
}
