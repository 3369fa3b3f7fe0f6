// `edit`: exact-string replacement in a UTF-8 text file. `oldString` must occur exactly once
// unless `replaceAll` is set (then every non-overlapping occurrence is replaced). No match,
// several matches without `replaceAll`, and `oldString === newString` are typed failures that
// leave the file untouched. Files above MAX_EDIT_FILE_BYTES are refused (`too_large`). The file is
// read from the descriptor verified to be the authorized target (paths.ts `openTarget`) and
// replaced in its verified directory (atomic-write.ts).
import { writeFileAtomic } from "./atomic-write.js";
import { fileFailure, filePermissions, openTarget } from "./paths.js";
import { EDIT_SPEC, applyEdit, checkEditChanges, editResultText, type EditInput } from "./file-contract.js";
import { MAX_EDIT_FILE_BYTES, ToolFailure, textResult, throwIfAborted, type ToolDefinition } from "./tool.js";

export type { EditInput } from "./file-contract.js";

export const editTool: ToolDefinition<EditInput> = {
  ...EDIT_SPEC,
  permissions: filePermissions("edit"),
  async execute(input, ctx) {
    checkEditChanges(input);
    const { target, opened } = await openTarget(ctx, "edit", input.filePath);
    const name = JSON.stringify(target.resource);
    let bytes: Buffer;
    try {
      if (!opened.stat.isFile()) throw new ToolFailure("not_file", `${name} is not a regular file.`);
      if (opened.stat.size > BigInt(MAX_EDIT_FILE_BYTES)) throw new ToolFailure("too_large", `${name} is larger than ${MAX_EDIT_FILE_BYTES} bytes.`);
      bytes = await opened.handle.readFile().catch((error: unknown) => {
        throw fileFailure(error, target.resource);
      });
    } finally {
      await opened.handle.close().catch(() => undefined);
    }
    let text: string;
    try {
      text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
    } catch {
      throw new ToolFailure("invalid_utf8", `${name} is not UTF-8 text.`);
    }
    const { updated, count } = applyEdit(text, input, name);
    throwIfAborted(ctx.signal);
    await ctx.recordBeforeWrite?.(target.canonicalPath);
    await writeFileAtomic(target.canonicalPath, updated, { checkpoint: () => throwIfAborted(ctx.signal) }).catch((error: unknown) => {
      throw fileFailure(error, target.resource);
    });
    return textResult(editResultText(target.resource, count));
  },
};
