// Pure text helpers for rows: durations, token counts, tool summaries and outputs.
import type { ContextUse, ToolTurnPart, Turn } from "../../clients/index.js";

/** `850ms`, `2.3s`, `1m 05s`. */
export function duration(ms: number): string {
  if (ms < 1_000) return `${Math.max(0, Math.round(ms))}ms`;
  if (ms < 60_000) return `${(ms / 1_000).toFixed(1)}s`;
  const minutes = Math.floor(ms / 60_000);
  return `${minutes}m ${String(Math.round((ms % 60_000) / 1_000)).padStart(2, "0")}s`;
}

/** `87.9K`, `1.2M`, `950`. */
export function tokens(count: number): string {
  if (count >= 1_000_000) return `${(count / 1_000_000).toFixed(1)}M`;
  if (count >= 1_000) return `${(count / 1_000).toFixed(1)}K`;
  return String(count);
}

/** Live context-window use, like `87.9K (8%)`. */
export function contextLine(use: ContextUse | undefined): string | undefined {
  if (!use || use.contextUnits <= 0) return undefined;
  return `${tokens(use.usedUnits)} (${Math.round((use.usedUnits / use.contextUnits) * 100)}%)`;
}

/** The first line of `text`, cut to `width` characters. */
export function firstLine(text: string, width = 80): string {
  const line = text.trim().split("\n")[0] ?? "";
  return line.length > width ? `${line.slice(0, width - 1)}…` : line;
}

/** A tool call's input in one short line: its most telling field, else compact JSON. */
export function toolSummary(part: ToolTurnPart): string {
  const input = part.input as Record<string, unknown> | undefined;
  if (input && typeof input === "object") {
    for (const key of ["command", "path", "filePath", "url", "pattern", "description", "query"]) {
      const value = input[key];
      if (typeof value === "string") return firstLine(value, 70);
    }
    const json = JSON.stringify(input);
    return json === "{}" ? "" : firstLine(json, 70);
  }
  return input === undefined ? "" : firstLine(String(input), 70);
}

/** A completed tool call's output as text (its canonical result, else its raw output or fault). */
export function toolOutput(part: ToolTurnPart): string {
  if (part.fault) return part.fault.message;
  const result = part.canonicalResult;
  if (result?.format === "text") return result.value;
  if (result?.format === "content") return result.value.map((item) => (item.type === "text" ? item.text : item.type === "json" ? JSON.stringify(item.value) : "[image]")).join("\n");
  if (result?.format === "json") return JSON.stringify(result.value, null, 2);
  if (part.output === undefined) return "";
  return typeof part.output === "string" ? part.output : JSON.stringify(part.output, null, 2);
}

/** The prompt text of a Turn. */
export function promptText(turn: Turn): string {
  return turn.request.prompt.map((part) => (part.type === "text" ? part.text : part.type === "image" ? "[image]" : "[content]")).join("\n");
}

/** Elapsed execution time of a settled Turn (queue wait excluded). */
export function executionMs(turn: Turn): number | undefined {
  if (turn.startedAt === undefined || turn.completedAt === undefined) return undefined;
  return turn.completedAt - turn.startedAt;
}

export const SPINNER = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

export const shortId = (id: string): string => id.slice(0, 8);

/** A CodeMode `execute` call made by the model: shown as one group with its nested calls. */
export const isExecuteGroup = (part: ToolTurnPart): boolean => part.toolId === "execute" && part.origin?.kind !== "codemode";

/** The parent `execute` call's toolCallId of a call made from a CodeMode script. */
export const codemodeParent = (part: ToolTurnPart): string | undefined => (part.origin?.kind === "codemode" ? part.origin.parentToolCallId : undefined);

/**
 * The nested calls of every `execute` group among `parts`, by the group's toolCallId, in
 * script order (ordinal). Calls whose parent is not among `parts` are not grouped.
 */
export function executeChildren(parts: readonly Turn["parts"][number][]): Map<string, ToolTurnPart[]> {
  const groups = new Map<string, ToolTurnPart[]>();
  for (const part of parts) if (part.type === "tool" && isExecuteGroup(part)) groups.set(part.toolCallId, []);
  for (const part of parts) {
    if (part.type !== "tool") continue;
    const parent = codemodeParent(part);
    if (parent !== undefined) groups.get(parent)?.push(part);
  }
  for (const children of groups.values()) children.sort((a, b) => ordinal(a) - ordinal(b));
  return groups;
}

const ordinal = (part: ToolTurnPart): number => (part.origin?.kind === "codemode" ? part.origin.ordinal : 0);

/** `3 calls · read, shell` — how many calls a script made and which tools, in first-use order. */
export function groupSummary(children: readonly ToolTurnPart[]): string {
  if (children.length === 0) return "no calls";
  const tools = [...new Set(children.map((child) => child.toolId))];
  const failed = children.filter((child) => child.state === "failed" || child.state === "denied").length;
  return `${children.length} call${children.length === 1 ? "" : "s"} · ${tools.join(", ")}${failed > 0 ? ` · ${failed} failed` : ""}`;
}
