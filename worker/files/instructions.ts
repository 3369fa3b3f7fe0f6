// AGENTS.md from the Worker's `/workspace` store: the Session workdir's file for prompt admission,
// in the same value Node's `loadWorkspaceInstructions` (services/workspace/instructions.ts) gives —
// the file, an `InstructionFileInvalid` when it exists but cannot be applied (larger than the 50
// KiB workspace text-read limit, not UTF-8, not a file), or undefined when absent or empty. The
// Node loaders read a disk through `node:fs` and take no reader, so this is their store twin;
// rendering is shared (`renderInstructionFile`). Skills are not read here yet: the Skill catalog
// scans disk roots and its frontmatter parser loads `yaml` through `createRequire`.
import type { InstructionFileInvalid, InstructionRead } from "../../services/workspace/instructions.js";
import { MAX_FILE_READ_BYTES } from "../../services/tools/tool.js";
import { isWorkspaceFileError } from "../../plugin/index.js";
import { workspacePath } from "./paths.js";
import { decodeUtf8, type WorkspaceFileStore } from "./store.js";

/** The instruction file's name (as `INSTRUCTIONS_FILE` on Node). */
export const AGENTS_FILE = "AGENTS.md";

const invalid = (canonicalPath: string, reason: InstructionFileInvalid["reason"], detail: string): InstructionFileInvalid => ({
  _tag: "InstructionFileInvalid",
  path: AGENTS_FILE,
  canonicalPath,
  reason,
  message: `${AGENTS_FILE} cannot be applied: ${detail}.`,
});

/** The workdir's AGENTS.md (`workdir` inside `/workspace`). Never throws for the file's sake. */
export function agentsInstructions(store: WorkspaceFileStore, workdir: string): InstructionRead | undefined {
  const path = workspacePath(AGENTS_FILE, workspacePath(workdir));
  const entry = store.stat(path);
  if (entry === undefined) return undefined;
  if (entry.kind !== "file") return invalid(path, "unreadable", "it is a directory");
  if (entry.size > MAX_FILE_READ_BYTES) return invalid(path, "oversized", `it is larger than ${MAX_FILE_READ_BYTES} bytes`);
  let content: string;
  try {
    content = decodeUtf8(store.readBytes(path, MAX_FILE_READ_BYTES));
  } catch (error) {
    if (isWorkspaceFileError(error) && error.code === "invalid_utf8") return invalid(path, "not_utf8", "it is not UTF-8 text");
    return invalid(path, "unreadable", "it cannot be read");
  }
  if (content.startsWith("\uFEFF")) content = content.slice(1);
  return content.trim() === "" ? undefined : { _tag: "InstructionFile", path: AGENTS_FILE, canonicalPath: path, content };
}
