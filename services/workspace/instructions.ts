// Workspace instructions: AGENTS.md files that steer the model.
//
// - Session level (`loadWorkspaceInstructions`): the workdir's AGENTS.md, loaded before each
//   prompt is admitted, so an edit or removal applies to the next Turn without a restart. Absent
//   or empty (whitespace only) means no instructions. A file that cannot be applied — unreadable,
//   not UTF-8, or over the workspace text-read limit — is an error value, so admission can fail
//   with its name and reason instead of the model silently running without it.
// - Nested (`discoverNestedInstructions`): after a successful read or directory listing below the
//   workdir, the AGENTS.md files strictly between the target and the workdir, nearest-first. The
//   workdir's own file is excluded (it is the Session-level one). Only files whose canonical path
//   stays inside the workdir are read: a nested AGENTS.md symlinked elsewhere would otherwise let
//   a `read` inside the workdir pull in outside content without `external_directory` approval.
//
// `readWorkspaceInstructions` is the earlier, lenient form (truncates, drops failures). It stays
// until the Turn loop switches to `loadWorkspaceInstructions`.
import { openSync, readSync, closeSync, fstatSync, lstatSync, realpathSync } from "node:fs";
import { realpath } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { insideRoot } from "../contract/paths.js";
import { readBoundedText, type TextFailureReason } from "./text.js";

/**
 * The most bytes an AGENTS.md may have. It is the 50 KiB workspace text-read limit and must equal
 * `MAX_FILE_READ_BYTES` of the `read` tool (services/tools/tool.ts; workspace does not import
 * tools, so a test pins the two together).
 */
export const MAX_INSTRUCTIONS_BYTES = 50 * 1024;

/** The instruction file's name, at the workdir and in nested directories. */
export const INSTRUCTIONS_FILE = "AGENTS.md";

/** One AGENTS.md to apply. */
export interface InstructionFile {
  readonly _tag: "InstructionFile";
  /** Workdir-relative path with forward slashes: `AGENTS.md`, `pkg/AGENTS.md`. */
  readonly path: string;
  /** The file's canonical absolute path (symlinks resolved), for de-duplication. */
  readonly canonicalPath: string;
  /** The file's text exactly as stored (a leading BOM removed); non-empty after trimming. */
  readonly content: string;
}

export type InstructionFailureReason = TextFailureReason | "outside_workdir";

/** An AGENTS.md that exists but cannot be applied. */
export interface InstructionFileInvalid {
  readonly _tag: "InstructionFileInvalid";
  readonly path: string;
  /** Canonical path when it could be resolved, else the path as found. */
  readonly canonicalPath: string;
  readonly reason: InstructionFailureReason;
  /** One line naming the file and the reason, fit for a fault or a tool result. */
  readonly message: string;
}

export type InstructionRead = InstructionFile | InstructionFileInvalid;

function invalid(path: string, canonicalPath: string, reason: InstructionFailureReason, detail: string): InstructionFileInvalid {
  return { _tag: "InstructionFileInvalid", path, canonicalPath, reason, message: `${path} cannot be applied: ${detail}.` };
}

async function canonical(path: string): Promise<string | undefined> {
  try {
    return await realpath(path);
  } catch {
    return undefined;
  }
}

/** Reads one AGENTS.md (`found`, absolute) as `path`; undefined when absent or empty. */
async function readInstructionFile(path: string, found: string, root: string | undefined): Promise<InstructionRead | undefined> {
  const resolved = (await canonical(found)) ?? found;
  if (root !== undefined && insideRoot(root, resolved) === undefined) {
    return invalid(path, resolved, "outside_workdir", "it links to a file outside the working directory");
  }
  // Decided again on what is opened: a directory swapped for a symlink since the check above never brings outside text in.
  const read = await readBoundedText(found, MAX_INSTRUCTIONS_BYTES, root === undefined ? {} : { within: root });
  switch (read._tag) {
    case "Outside":
      return invalid(path, read.canonicalPath ?? resolved, "outside_workdir", "it links to a file outside the working directory");
    case "Absent":
      return undefined;
    case "Failed":
      return invalid(path, resolved, read.reason, read.detail);
    case "Text":
      return read.text.trim() === "" ? undefined : { _tag: "InstructionFile", path, canonicalPath: resolved, content: read.text };
  }
}

/**
 * The workdir's AGENTS.md for prompt admission: the file, an error value when it exists but
 * cannot be applied, or undefined when it is absent or empty. Never throws.
 */
export async function loadWorkspaceInstructions(workdir: string): Promise<InstructionRead | undefined> {
  // Synchronous on purpose: this runs for every prompt, and on a local disk a realpath(3) and an
  // lstat cost microseconds, while each promise-based call took a threadpool round trip (and a
  // missing file an Error with its stack) — a measurable share of a warm host's CPU per Turn.
  const root = canonicalNow(workdir) ?? resolve(workdir);
  const found = join(root, INSTRUCTIONS_FILE);
  // Nothing there (not even a dangling symlink): absent, as the full read below would find it.
  if (absentNow(found)) return undefined;
  // The Session-level file is the user's own choice of workdir: a symlink to a shared file is fine.
  return readInstructionFile(INSTRUCTIONS_FILE, found, undefined);
}

/** `realpath(3)` of `path` now, or undefined when it cannot be resolved. */
function canonicalNow(path: string): string | undefined {
  try {
    return realpathSync.native(path);
  } catch {
    return undefined;
  }
}

/** Whether nothing at all is at `path` (no entry); any other answer, or a failure, is not "absent". */
function absentNow(path: string): boolean {
  try {
    return lstatSync(path, { throwIfNoEntry: false }) === undefined;
  } catch {
    return false;
  }
}

export interface NestedInstructionOptions {
  /** Whether `target` is a directory (a listing) rather than a file (a read). */
  readonly isDirectory: boolean;
}

/**
 * The AGENTS.md files between `target` (a canonical absolute path, as in the `read` projection's
 * `metadata.canonicalPath`) and `workdir`, nearest-first: the target itself when it is a directory,
 * else its directory, then each ancestor up to but not including the workdir. Nothing for targets
 * outside the workdir or directly in it. A target that is itself one of these files is not listed
 * again. Broken files are reported as `InstructionFileInvalid`, never thrown. The caller filters
 * out files already attached in model-visible history.
 */
export async function discoverNestedInstructions(
  workdir: string,
  target: string,
  options: NestedInstructionOptions,
): Promise<readonly InstructionRead[]> {
  const root = await canonical(workdir);
  if (root === undefined) return [];
  const absoluteTarget = resolve(root, target);
  const found: InstructionRead[] = [];
  let dir = options.isDirectory ? absoluteTarget : dirname(absoluteTarget);
  for (;;) {
    const relative = insideRoot(root, dir);
    if (relative === undefined || relative === ".") break;
    const file = join(dir, INSTRUCTIONS_FILE);
    if (file !== absoluteTarget) {
      const read = await readInstructionFile(`${relative}/${INSTRUCTIONS_FILE}`, file, root);
      if (read !== undefined) found.push(read);
    }
    dir = dirname(dir);
  }
  return found;
}

/** An instruction file as the developer-instruction text the model receives. */
export function renderInstructionFile(file: InstructionFile): string {
  const where = file.path === INSTRUCTIONS_FILE ? "AGENTS.md in the working directory" : file.path;
  return `Instructions from ${where}:\n\n${file.content.trim()}`;
}

/**
 * The workdir's AGENTS.md as a system-prompt section, or undefined when there is none (or it is
 * empty). Lenient: cuts an oversized file and drops an unreadable one.
 * @deprecated Use `loadWorkspaceInstructions`, which reports unusable files; kept until the Turn
 * loop switches.
 */
export function readWorkspaceInstructions(workdir: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(join(workdir, "AGENTS.md"), "r");
  } catch {
    return undefined;
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) return undefined;
    // Read one byte past the cap to know whether the file was cut.
    const buffer = Buffer.alloc(Math.min(stat.size, MAX_INSTRUCTIONS_BYTES + 1));
    const read = readSync(fd, buffer, 0, buffer.length, 0);
    const truncated = read > MAX_INSTRUCTIONS_BYTES;
    const text = buffer.subarray(0, Math.min(read, MAX_INSTRUCTIONS_BYTES)).toString("utf8").trim();
    if (text === "") return undefined;
    const cut = truncated ? `\n\n[AGENTS.md truncated at ${MAX_INSTRUCTIONS_BYTES} bytes]` : "";
    return `Instructions from AGENTS.md in the working directory:\n\n${text}${cut}`;
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}
