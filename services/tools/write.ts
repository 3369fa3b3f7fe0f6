// `write`: creates or replaces a UTF-8 text file, creating missing parent directories.
// Authorized as action `edit` (the reference's file-modifying action; there is no `write` action),
// on the canonical target (a symlink is written through to its target).
import { mkdir } from "node:fs/promises";
import { writeFileAtomic } from "./atomic-write.js";
import { dirname } from "node:path";
import { fileFailure, filePermissions, statTarget } from "./paths.js";
import { ToolFailure, byteLength, textResult, throwIfAborted, type ToolDefinition } from "./tool.js";

export interface WriteInput {
  readonly filePath: string;
  readonly content: string;
}

export const writeTool: ToolDefinition<WriteInput> = {
  id: "write",
  description:
    "Create or replace a text file with the given content, creating missing parent directories. " +
    "Paths are relative to the Session workdir or absolute.",
  inputSchema: {
    type: "object",
    properties: {
      filePath: { type: "string", minLength: 1, description: "File to write." },
      content: { type: "string", description: "The complete new content." },
    },
    required: ["filePath", "content"],
    additionalProperties: false,
  },
  permissions: filePermissions("edit"),
  async execute(input, ctx) {
    const { target, info: existing } = await statTarget(ctx, "edit", input.filePath, { mayBeMissing: true });
    if (existing?.isDirectory()) throw new ToolFailure("not_file", `${JSON.stringify(target.resource)} is a directory.`);
    try {
      await mkdir(dirname(target.canonicalPath), { recursive: true });
      throwIfAborted(ctx.signal);
      await writeFileAtomic(target.canonicalPath, input.content);
    } catch (error) {
      if (error instanceof ToolFailure) throw error;
      // mkdir through an existing file reports EEXIST or ENOTDIR: a parent is not a directory.
      if ((error as NodeJS.ErrnoException).code === "EEXIST") {
        throw new ToolFailure("not_file", `A parent of ${JSON.stringify(target.resource)} is not a directory.`);
      }
      throw fileFailure(error, target.resource);
    }
    const bytes = byteLength(input.content);
    return textResult(`${existing ? "Replaced" : "Created"} ${target.resource} (${bytes} bytes).`);
  },
};
