// The release forms under test: the single executable built by tools/binary/build.mjs and unpacked
// from its archive as a user does, and PATHs without `node`, so a command that still needed Node
// on the machine would fail.
//
// The build takes ~30 s of a loaded machine's time, so it is shared: every test file (and every
// run) asking for the same build gets the one already made, keyed by the tree's build stamp
// (dist/.build-stamp: a fingerprint of every source the build reads), this Node and the release
// number. The first asker builds under a lock file; the others wait for its folder to appear.
// Builds of other stamps of this checkout are removed when a new one is made.
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { accessSync, constants, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, symlinkSync, writeSync, closeSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { promisify } from "node:util";
import { repoRoot } from "./harness.js";

const run = promisify(execFile);

export interface BuiltBinary {
  /** The release number the executable reports. */
  readonly version: string;
  /** ze-harness-<version>-<platform>-<arch>.tar.gz */
  readonly archive: string;
  /** The archive's top folder, unpacked beside it. */
  readonly folder: string;
  /** `<folder>/ze-harness` */
  readonly executable: string;
  /** Top-level names inside the archive's folder. */
  readonly entries: readonly string[];
}

export interface BuildOptions {
  /** Build as this release number (build.mjs --version) instead of package.json's. */
  readonly version?: string;
}

/** This checkout's shared builds: one folder per checkout, so worktrees do not prune each other's. */
const cacheRoot = (): string => join(tmpdir(), `ze-harness-binary-${createHash("sha256").update(repoRoot).digest("hex").slice(0, 12)}`);

function buildStamp(): string {
  const file = join(repoRoot, "dist", ".build-stamp");
  if (!existsSync(file)) throw new Error("dist/.build-stamp is missing: run `npm run build` before the binary tests");
  return readFileSync(file, "utf8").trim().slice(0, 16);
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
};

/** The lock holder's pid (undefined while it is being written, or when the lock is gone). */
function holder(lock: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(lock, "utf8"), 10);
    return Number.isSafeInteger(pid) ? pid : undefined;
  } catch {
    return undefined;
  }
}

function tryLock(lock: string): boolean {
  try {
    const fd = openSync(lock, "wx");
    writeSync(fd, String(process.pid));
    closeSync(fd);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    return false;
  }
}

function describe(folder: string, version: string): BuiltBinary {
  const release = join(folder, "release");
  const archive = readdirSync(release).find((name) => name.endsWith(".tar.gz"));
  if (archive === undefined) throw new Error(`${release} holds no archive`);
  const unpacked = join(folder, archive.replace(/\.tar\.gz$/, ""));
  return { version, archive: join(release, archive), folder: unpacked, executable: join(unpacked, "ze-harness"), entries: readdirSync(unpacked).sort() };
}

/** `npm run build:binary`'s second step (dist/ is already built) into the shared cache, unpacked beside its archive. */
async function build(root: string, key: string, version: string, override: string | undefined): Promise<void> {
  // Builds of an older tree of this checkout are stale (this tree's, of other versions or still
  // in progress, start with its stamp too).
  for (const name of readdirSync(root)) if (!name.startsWith(key.slice(0, 16)) && !name.endsWith(".lock")) rmSync(join(root, name), { recursive: true, force: true });
  const partial = mkdtempSync(join(root, `${key}.partial-`));
  try {
    const release = join(partial, "release");
    // --out: not dist/release/, which a concurrent `npm pack` walks.
    await run(process.execPath, [join(repoRoot, "tools", "binary", "build.mjs"), `--out=${release}`, ...(override !== undefined ? [`--version=${override}`] : [])], { cwd: repoRoot, maxBuffer: 16 * 1024 * 1024 });
    const archive = readdirSync(release).find((name) => name.endsWith(".tar.gz"));
    if (archive !== `ze-harness-${version}-${process.platform}-${process.arch}.tar.gz`) throw new Error(`tools/binary/build.mjs wrote ${archive ?? "no archive"}`);
    await run("tar", ["-xzf", join(release, archive), "-C", partial]);
    renameSync(partial, join(root, key));
  } catch (error) {
    rmSync(partial, { recursive: true, force: true });
    throw error;
  }
}

/**
 * The executable and its release archive for this tree (and `options.version`), built once and
 * shared by every test file. The folder is shared: a test must not change it.
 */
export async function buildBinary(options: BuildOptions = {}): Promise<BuiltBinary> {
  const packageVersion = (JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as { version: string }).version;
  const version = options.version ?? packageVersion;
  const root = cacheRoot();
  mkdirSync(root, { recursive: true });
  const key = `${buildStamp()}-${process.version}-${version}`;
  const done = join(root, key);
  const lock = `${done}.lock`;
  const deadline = Date.now() + 15 * 60_000;
  for (;;) {
    if (existsSync(done)) return describe(done, version);
    if (tryLock(lock)) {
      try {
        if (!existsSync(done)) await build(root, key, version, options.version);
      } finally {
        rmSync(lock, { force: true });
      }
      continue;
    }
    // Another test file is building it: wait for its folder, or take over from a builder that died.
    const pid = holder(lock);
    if (pid !== undefined && !alive(pid)) rmSync(lock, { force: true });
    if (Date.now() > deadline) throw new Error(`timed out waiting for the binary build under ${lock}`);
    await new Promise((resolvePromise) => setTimeout(resolvePromise, 250));
  }
}

const executableIn = (directory: string, name: string): boolean => {
  try {
    accessSync(join(directory, name), constants.X_OK);
    return true;
  } catch {
    return false;
  }
};

/** This process's PATH without every folder holding a `node` (the system tools stay). */
export function pathWithoutNode(): string {
  return (process.env["PATH"] ?? "")
    .split(delimiter)
    .filter((directory) => directory !== "" && !executableIn(directory, "node"))
    .join(delimiter);
}

/** What install.sh needs (reference "Install": a POSIX shell, curl, openssl, mktemp, tar) and the coreutils it runs. */
export const INSTALLER_TOOLS = ["sh", "curl", "openssl", "mktemp", "tar", "gzip", "cat", "cut", "head", "sed", "grep", "tr", "mkdir", "rm", "mv", "ln", "cp", "readlink", "uname", "chmod", "ls", "env", "wc"] as const;

/**
 * A PATH of one folder holding only `tools` (links to this machine's), created in `directory`:
 * a machine with the installer's prerequisites and nothing else, no `node` in particular.
 */
export function toolsOnlyPath(directory: string, tools: readonly string[] = INSTALLER_TOOLS): string {
  const bin = join(directory, "tools-only-bin");
  mkdirSync(bin, { recursive: true });
  const path = (process.env["PATH"] ?? "").split(delimiter).filter((folder) => folder !== "");
  for (const tool of tools) {
    const found = path.find((folder) => executableIn(folder, tool));
    if (found === undefined) throw new Error(`${tool} is not on PATH`);
    symlinkSync(realpathSync(join(found, tool)), join(bin, tool));
  }
  return bin;
}
