// Workspace instructions: the workdir's AGENTS.md, read fresh for every prompt (so an edit
// applies to the next Turn without a restart) and capped at 50 KiB.
import { openSync, readSync, closeSync, fstatSync } from "node:fs";
import { join } from "node:path";

/** AGENTS.md is applied up to this many bytes. */
export const MAX_INSTRUCTIONS_BYTES = 50 * 1024;

/** The workdir's AGENTS.md as a system-prompt section, or undefined when there is none (or it is empty). */
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
