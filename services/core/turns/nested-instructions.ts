// Nested workspace instructions: a successful read or listing below the workdir discovers the
// AGENTS.md files between its target and the workdir (nearest-first) and attaches the ones not
// already in model-visible history to that result — recorded on the tool part as instruction
// sources and appended to what the model receives. A file counts as attached while an earlier
// result that carries it is still in the history the Turn sends (reference: "Workspace
// instructions"); a file that cannot be read is left out, never failing the read.
import { createHash } from "node:crypto";
import type { TextInstructionSource, ToolResult } from "../../../generated/client/types.gen.js";
import type { ModelMessage } from "../../providers/index.js";
import { discoverNestedInstructions, renderInstructionFile, type InstructionFile } from "../../workspace/instructions.js";
import { withCurrentHistory } from "../compaction/automatic.js";
import type { RunningTurn } from "./running.js";

/** The marker line `renderInstructionFile` starts an attachment with. */
const ATTACHED = /^Instructions from (.+):$/gm;

/** The instruction files already attached in `messages` (their workdir-relative paths). */
function attachedIn(messages: readonly ModelMessage[]): Set<string> {
  const found = new Set<string>();
  for (const message of messages) {
    if (message.role !== "tool") continue;
    if (message.result.format === "json") {
      const loaded = (message.result.value as { loadedInstructions?: { path?: unknown }[] } | null)?.loadedInstructions;
      if (Array.isArray(loaded)) for (const entry of loaded) if (typeof entry?.path === "string") found.add(entry.path);
      continue;
    }
    const text = message.result.format === "text" ? message.result.value : message.result.format === "content" ? message.result.value.map((part) => (part.type === "text" ? part.text : "")).join("\n") : "";
    for (const match of text.matchAll(ATTACHED)) found.add(match[1]!);
  }
  return found;
}

export interface NestedAttachment {
  readonly sources: TextInstructionSource[];
  /** The result the model receives: the tool's, with the instructions appended. */
  readonly result: ToolResult;
}

/** Discovers and attaches the nested instructions of one successful read; undefined when none are new. */
export async function attachNestedInstructions(
  t: RunningTurn,
  toolCallId: string,
  target: { readonly path: string; readonly isDirectory: boolean },
  result: ToolResult,
): Promise<NestedAttachment | undefined> {
  const reads = await discoverNestedInstructions(t.workdir, target.path, { isDirectory: target.isDirectory });
  const files = reads.filter((read): read is InstructionFile => read._tag === "InstructionFile");
  if (files.length === 0) return undefined;
  // Read from the history the Turn sends now (after an in-Turn compaction, the compacted one), so
  // a result compacted away lets its files attach again. Calls of one model step run concurrently:
  // `pending` keeps two of them from attaching the same file.
  const attached = attachedIn(withCurrentHistory(t, [...t.history, ...t.transcript]));
  const fresh = files.filter((file) => !attached.has(file.path) && !t.pendingInstructions.has(file.path));
  if (fresh.length === 0) return undefined;
  for (const file of fresh) t.pendingInstructions.add(file.path);
  const sources = fresh.map(
    (file, index): TextInstructionSource => ({
      kind: "instruction",
      id: file.path,
      revision: createHash("sha256").update(file.content).digest("hex"),
      order: index + 1,
      role: "developer",
      content: file.content,
      afterToolCallId: toolCallId,
    }),
  );
  const text = fresh.map((file) => renderInstructionFile(file)).join("\n\n");
  return { sources, result: withInstructions(result, fresh, text) };
}

/** A text result gets the instructions appended; a JSON one (a listing) carries them as `loadedInstructions`. */
function withInstructions(result: ToolResult, files: readonly InstructionFile[], text: string): ToolResult {
  if (result.format === "text") return { format: "text", value: `${result.value}\n\n${text}` };
  if (result.format === "json" && typeof result.value === "object" && result.value !== null && !Array.isArray(result.value)) {
    return { format: "json", value: { ...result.value, loadedInstructions: files.map((file) => ({ path: file.path, content: renderInstructionFile(file) })) } };
  }
  if (result.format === "content") return { format: "content", value: [...result.value, { type: "text", text }] };
  return { format: "content", value: [{ type: "json", value: result.value }, { type: "text", text }] };
}
