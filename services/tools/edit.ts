// `edit`: exact-string replacement in a UTF-8 text file. `oldString` must occur exactly once
// unless `replaceAll` is set (then every non-overlapping occurrence is replaced). No match,
// several matches without `replaceAll`, and `oldString === newString` are typed failures that
// leave the file untouched. Files above MAX_EDIT_FILE_BYTES are refused (`too_large`). The file is
// read from the descriptor verified to be the authorized target (paths.ts `openTarget`) and
// replaced in its verified directory (atomic-write.ts).
import { writeFileAtomic } from "./atomic-write.js";
import { fileFailure, filePermissions, openTarget } from "./paths.js";
import { MAX_EDIT_FILE_BYTES, ToolFailure, textResult, throwIfAborted, type ToolDefinition } from "./tool.js";

export interface EditInput {
  readonly filePath: string;
  readonly oldString: string;
  readonly newString: string;
  readonly replaceAll?: boolean;
}

function countOccurrences(text: string, search: string): number {
  let count = 0;
  for (let at = text.indexOf(search); at !== -1; at = text.indexOf(search, at + search.length)) count++;
  return count;
}

export const editTool: ToolDefinition<EditInput> = {
  id: "edit",
  description:
    "Replace an exact string in a text file. oldString must match the file exactly (whitespace included) and occur " +
    "once; set replaceAll to replace every occurrence. Read the file first.",
  inputSchema: {
    type: "object",
    properties: {
      filePath: { type: "string", minLength: 1, description: "File to edit." },
      oldString: { type: "string", minLength: 1, description: "Exact text to replace." },
      newString: { type: "string", description: "Replacement text." },
      replaceAll: { type: "boolean", description: "Replace every occurrence instead of exactly one." },
    },
    required: ["filePath", "oldString", "newString"],
    additionalProperties: false,
  },
  permissions: filePermissions("edit"),
  async execute(input, ctx) {
    if (input.oldString === input.newString) throw new ToolFailure("no_change", "oldString and newString are identical; nothing to change.");
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
    const count = countOccurrences(text, input.oldString);
    if (count === 0) throw new ToolFailure("no_match", `oldString was not found in ${name}.`);
    if (count > 1 && input.replaceAll !== true) {
      throw new ToolFailure(
        "ambiguous_match",
        `oldString occurs ${count} times in ${name}; add surrounding context to make it unique, or set replaceAll.`,
      );
    }
    const updated = input.replaceAll === true ? text.split(input.oldString).join(input.newString) : text.replace(input.oldString, () => input.newString);
    throwIfAborted(ctx.signal);
    await ctx.recordBeforeWrite?.(target.canonicalPath);
    await writeFileAtomic(target.canonicalPath, updated, { checkpoint: () => throwIfAborted(ctx.signal) }).catch((error: unknown) => {
      throw fileFailure(error, target.resource);
    });
    return textResult(`Edited ${target.resource}: replaced ${count} occurrence${count === 1 ? "" : "s"}.`);
  },
};
