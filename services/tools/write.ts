// `write`: creates or replaces a UTF-8 text file, creating missing parent directories.
// Authorized as action `edit` (the reference's file-modifying action; there is no `write` action),
// on the canonical target: a symlink is written through to its target — the target is what the
// projection names (with `external_directory` when it lies outside), and the file is replaced in
// the target's own directory, opened and verified on its descriptor (atomic-write.ts). The link
// itself stays a link.
import { writeFileAtomic } from "./atomic-write.js";
import { authorizedPath, fileFailure, filePermissions } from "./paths.js";
import { WRITE_SPEC, writeResultText, type WriteInput } from "./file-contract.js";
import { byteLength, textResult, throwIfAborted, type ToolDefinition } from "./tool.js";

export type { WriteInput } from "./file-contract.js";

export const writeTool: ToolDefinition<WriteInput> = {
  ...WRITE_SPEC,
  permissions: filePermissions("edit"),
  async execute(input, ctx) {
    throwIfAborted(ctx.signal);
    const target = authorizedPath(ctx, "edit", input.filePath);
    let replaced: boolean;
    await ctx.recordBeforeWrite?.(target.canonicalPath);
    try {
      ({ replaced } = await writeFileAtomic(target.canonicalPath, input.content, { makeParents: true, checkpoint: () => throwIfAborted(ctx.signal) }));
    } catch (error) {
      // A parent that exists as a file is ENOTDIR: not_file.
      throw fileFailure(error, target.resource);
    }
    return textResult(writeResultText(target.resource, replaced, byteLength(input.content)));
  },
};
