// The Execute trace: Ctrl+X J / Shift+J select the next / previous call of the latest `execute`
// group, Ctrl+X D toggles that call's details, Ctrl+X L reveals ten more calls and Ctrl+X Shift+L
// folds the selected revealed range (or the latest one). The trace shows under the live Turns —
// also for a group whose Turn already settled into the scrollback — until Esc closes it. Trace
// shortcuts close the group's source/output view (Ctrl+X T) first.
import type { ToolTurnPart, Turn } from "../../../clients/index.js";
import { executeChildren, isExecuteGroup } from "../format.js";
import type { Controller } from "./controller.js";

/** Calls shown before any Ctrl+X L. */
export const TRACE_BASE_CALLS = 5;
/** Calls one Ctrl+X L reveals. */
export const TRACE_REVEAL_CALLS = 10;

export interface TraceState {
  /** The `execute` part the trace follows. */
  readonly partId: string;
  /** The selected call's index in script order (undefined before the first J). */
  readonly selected: number | undefined;
  /** Calls whose details are open (Ctrl+X D), by part id. */
  readonly detailed: readonly string[];
  /** Revealed ranges, in the order revealed: how many calls each Ctrl+X L added. */
  readonly revealed: readonly number[];
}

export interface TraceGroup {
  readonly part: ToolTurnPart;
  readonly children: readonly ToolTurnPart[];
}

/** The latest `execute` group among `turns` (newest Turn first, its last group). */
export function latestGroup(turns: readonly Turn[]): TraceGroup | undefined {
  for (let index = turns.length - 1; index >= 0; index--) {
    const parts = turns[index]!.parts;
    const groups = executeChildren(parts);
    for (let at = parts.length - 1; at >= 0; at--) {
      const part = parts[at]!;
      if (part.type === "tool" && isExecuteGroup(part)) return { part, children: groups.get(part.toolCallId) ?? [] };
    }
  }
  return undefined;
}

/** The group a trace follows, looked up again in the current view (it may still be running). */
export function tracedGroup(turns: readonly Turn[], trace: TraceState): TraceGroup | undefined {
  for (const turn of turns) {
    const part = turn.parts.find((candidate): candidate is ToolTurnPart => candidate.type === "tool" && candidate.id === trace.partId);
    if (part) return { part, children: executeChildren(turn.parts).get(part.toolCallId) ?? [] };
  }
  return undefined;
}

/** How many calls the trace shows. */
export const visibleCalls = (trace: TraceState, total: number): number => Math.min(total, TRACE_BASE_CALLS + trace.revealed.reduce((sum, count) => sum + count, 0));

export type TraceKey = "next" | "previous" | "details" | "reveal" | "fold";

/** Applies one trace shortcut to the latest group's trace (opening it when needed). */
export function traceKey(controller: Controller, action: TraceKey): void {
  const turns = controller.view?.turns ?? [];
  const current = controller.state.trace;
  const group = current ? tracedGroup(turns, current) : undefined;
  const latest = latestGroup(turns);
  if (!latest) return controller.info("no Execute call to trace yet");
  // A newer group replaces the trace of an older one.
  const base: TraceState = group && current && group.part.id === latest.part.id ? current : { partId: latest.part.id, selected: undefined, detailed: [], revealed: [] };
  const next = step(base, action, latest.children.length);
  // Trace shortcuts close source/output first.
  const expanded = new Set(controller.state.expanded);
  expanded.delete(latest.part.id);
  controller.update({ trace: next, expanded });
}

/** The trace after one shortcut, for a group of `total` calls. */
export function step(trace: TraceState, action: TraceKey, total: number): TraceState {
  if (total === 0) return trace;
  const selected = trace.selected;
  switch (action) {
    case "next":
    case "previous": {
      const target = selected === undefined ? (action === "next" ? 0 : total - 1) : Math.max(0, Math.min(total - 1, selected + (action === "next" ? 1 : -1)));
      // Selecting past the shown calls reveals the range that holds it.
      let revealed = trace.revealed;
      while (target >= visibleCalls({ ...trace, revealed }, total)) revealed = [...revealed, TRACE_REVEAL_CALLS];
      return { ...trace, selected: target, revealed };
    }
    case "details": {
      const index = selected ?? 0;
      return { ...trace, selected: index, detailed: toggle(trace.detailed, String(index)) };
    }
    case "reveal":
      return visibleCalls(trace, total) >= total ? trace : { ...trace, revealed: [...trace.revealed, TRACE_REVEAL_CALLS] };
    case "fold": {
      if (trace.revealed.length === 0) return trace;
      const range = selected === undefined ? -1 : rangeOf(trace, selected);
      const fold = range >= 0 ? range : trace.revealed.length - 1;
      const revealed = trace.revealed.filter((_, index) => index !== fold);
      const shown = visibleCalls({ ...trace, revealed }, total);
      return { ...trace, revealed, selected: selected === undefined ? undefined : Math.min(selected, shown - 1) };
    }
  }
}

/** The revealed range (index into `revealed`) that holds call `index`, or -1 for the base calls. */
function rangeOf(trace: TraceState, index: number): number {
  let end = TRACE_BASE_CALLS;
  for (let range = 0; range < trace.revealed.length; range++) {
    if (index < end) return range - 1;
    end += trace.revealed[range]!;
    if (index < end) return range;
  }
  return -1;
}

const toggle = (items: readonly string[], item: string): string[] => (items.includes(item) ? items.filter((candidate) => candidate !== item) : [...items, item]);
