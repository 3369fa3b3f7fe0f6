// AGENTS.md from the Worker's `/workspace` store: the Session workdir's file for prompt admission,
// in the same value Node's `loadWorkspaceInstructions` (services/workspace/instructions.ts) gives —
// the file, an `InstructionFileInvalid` when it exists but cannot be applied (larger than the 50
// KiB workspace text-read limit, not UTF-8, not a file), or undefined when absent or empty — and
// the nested files a `read` below the workdir discovers, as `discoverNestedInstructions` gives them. The
// Node loaders read a disk through `node:fs` and take no reader, so this is their store twin;
// rendering is shared (`renderInstructionFile`). Skills are read from the store by worker/skills.ts.
import type { InstructionFileInvalid, InstructionRead } from "../../services/workspace/instructions.js";
import { MAX_FILE_READ_BYTES } from "../../services/tools/tool.js";
import { isWorkspaceFileError } from "../../plugin/index.js";
import { parentOf, relativeTo, workspacePath } from "./paths.js";
import { decodeUtf8, type WorkspaceFileStore } from "./store.js";

/** The instruction file's name (as `INSTRUCTIONS_FILE` on Node). */
export const AGENTS_FILE = "AGENTS.md";

const invalid = (name: string, canonicalPath: string, reason: InstructionFileInvalid["reason"], detail: string): InstructionFileInvalid => ({
  _tag: "InstructionFileInvalid",
  path: name,
  canonicalPath,
  reason,
  message: `${name} cannot be applied: ${detail}.`,
});

/** The workdir's AGENTS.md (`workdir` inside `/workspace`). Never throws for the file's sake. */
export function agentsInstructions(store: WorkspaceFileStore, workdir: string): InstructionRead | undefined {
  return readInstructionFile(store, AGENTS_FILE, workspacePath(AGENTS_FILE, workspacePath(workdir)));
}

/**
 * The AGENTS.md files between `target` (a canonical path, as a file tool's `instructionTarget`)
 * and `workdir`, nearest-first: the target itself when it is a directory, else its directory, then
 * each ancestor up to but not including the workdir. Nothing for targets outside the workdir or
 * directly in it; a target that is one of these files is not listed again. Paths are
 * workdir-relative (`pkg/AGENTS.md`).
 */
export function nestedAgentsInstructions(store: WorkspaceFileStore, workdir: string, target: string, options: { readonly isDirectory: boolean }): InstructionRead[] {
  const root = workspacePath(workdir);
  const found: InstructionRead[] = [];
  let directory = options.isDirectory ? target : parentOf(target);
  for (;;) {
    const relative = relativeTo(root, directory);
    if (relative === undefined || relative === ".") break;
    const file = `${directory}/${AGENTS_FILE}`;
    if (file !== target) {
      const read = readInstructionFile(store, `${relative}/${AGENTS_FILE}`, file);
      if (read !== undefined) found.push(read);
    }
    directory = parentOf(directory);
  }
  return found;
}

function readInstructionFile(store: WorkspaceFileStore, name: string, path: string): InstructionRead | undefined {
  const entry = store.stat(path);
  if (entry === undefined) return undefined;
  if (entry.kind !== "file") return invalid(name, path, "unreadable", "it is a directory");
  if (entry.size > MAX_FILE_READ_BYTES) return invalid(name, path, "oversized", `it is larger than ${MAX_FILE_READ_BYTES} bytes`);
  let content: string;
  try {
    content = decodeUtf8(store.readBytes(path, MAX_FILE_READ_BYTES));
  } catch (error) {
    if (isWorkspaceFileError(error) && error.code === "invalid_utf8") return invalid(name, path, "not_utf8", "it is not UTF-8 text");
    return invalid(name, path, "unreadable", "it cannot be read");
  }
  if (content.startsWith("\uFEFF")) content = content.slice(1);
  return content.trim() === "" ? undefined : { _tag: "InstructionFile", path: name, canonicalPath: path, content };
}
