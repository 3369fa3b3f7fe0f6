// The release forms under test: the single executable built by tools/binary/build.mjs (once per
// test file: the build takes ~30 s) and unpacked from its archive as a user does, and a PATH
// without `node`, so a command that still needed Node on the machine would fail.
import { execFileSync } from "node:child_process";
import { accessSync, constants, mkdtempSync, readdirSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { repoRoot } from "./harness.js";

export interface BuiltBinary {
  /** ze-harness-<version>-<platform>-<arch>.tar.gz */
  readonly archive: string;
  /** The archive's top folder, unpacked in a temp directory. */
  readonly folder: string;
  /** `<folder>/ze-harness` */
  readonly executable: string;
  /** Top-level names inside the archive's folder. */
  readonly entries: readonly string[];
  cleanup(): void;
}

/**
 * Runs `npm run build:binary`'s second step (dist/ is already built) into a temp folder, not
 * dist/release/ (a concurrent `npm pack` walks dist/), and unpacks the archive beside it.
 */
export function buildBinary(): BuiltBinary {
  const directory = realpathSync(mkdtempSync(join(tmpdir(), "ze-binary-")));
  const release = join(directory, "release");
  execFileSync(process.execPath, [join(repoRoot, "tools", "binary", "build.mjs"), `--out=${release}`], { cwd: repoRoot, stdio: ["ignore", "ignore", "pipe"] });
  const archive = readdirSync(release).find((name) => name.endsWith(".tar.gz"));
  if (archive === undefined) throw new Error("tools/binary/build.mjs wrote no archive");
  execFileSync("tar", ["-xzf", join(release, archive), "-C", directory]);
  const folder = join(directory, archive.replace(/\.tar\.gz$/, ""));
  return {
    archive: join(release, archive),
    folder,
    executable: join(folder, "ze-harness"),
    entries: readdirSync(folder).sort(),
    cleanup: () => rmSync(directory, { recursive: true, force: true }),
  };
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
