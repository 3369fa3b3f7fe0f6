// Ctrl+X T: toggles the details of the latest tool call or reasoning. A call made from a CodeMode
// script toggles its `execute` group (source, nested calls, output). While the Turn runs the row
// expands in place; for a settled Turn (already in the scrollback) the details print below.
import type { ToolTurnPart } from "../../../clients/index.js";
import { codemodeParent, executeChildren } from "../format.js";
import type { Controller } from "./controller.js";

export function toggleLatestDetails(controller: Controller): void {
  const turns = controller.view?.turns ?? [];
  for (let index = turns.length - 1; index >= 0; index--) {
    const turn = turns[index]!;
    const latest = [...turn.parts].reverse().find((candidate) => candidate.type === "tool" || candidate.type === "reasoning");
    if (!latest || (latest.type !== "tool" && latest.type !== "reasoning")) continue;
    const groups = executeChildren(turn.parts);
    const parentId = latest.type === "tool" ? codemodeParent(latest) : undefined;
    const parent = parentId !== undefined && groups.has(parentId) ? turn.parts.find((candidate): candidate is ToolTurnPart => candidate.type === "tool" && candidate.toolCallId === parentId) : undefined;
    const part = parent ?? latest;
    if (controller.state.printed.some((entry) => entry.key === turn.id)) {
      const children = part.type === "tool" ? groups.get(part.toolCallId) : undefined;
      return controller.update({ printed: [...controller.state.printed, { key: `${part.id}:${controller.state.printed.length}`, part, ...(children ? { children } : {}) }] });
    }
    const expanded = new Set(controller.state.expanded);
    if (expanded.has(part.id)) expanded.delete(part.id);
    else expanded.add(part.id);
    return controller.update({ expanded });
  }
}
