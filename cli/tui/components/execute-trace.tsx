// The Execute trace panel (state/trace.ts): the group's summary line, then its shown calls in
// script order — the selected one marked, those with details open expanded — and how many more
// Ctrl+X L would reveal.
import { Box, Text } from "ink";
import { groupSummary } from "../format.js";
import { visibleCalls, type TraceGroup, type TraceState } from "../state/trace.js";
import { ToolRow } from "./tool-row.js";

export function ExecuteTrace({ group, trace, spinner }: { readonly group: TraceGroup; readonly trace: TraceState; readonly spinner: string }) {
  const shown = visibleCalls(trace, group.children.length);
  const hidden = group.children.length - shown;
  return (
    <Box flexDirection="column" borderStyle="single" borderColor="gray" paddingX={1}>
      <Text>
        <Text bold>execute trace</Text> · {groupSummary(group.children)}
        <Text dimColor> · J/Shift+J select · D details · L ten more · Shift+L fold · Esc close</Text>
      </Text>
      {group.children.slice(0, shown).map((child, index) => (
        <Box key={child.id}>
          <Text color={index === trace.selected ? "cyan" : undefined}>{index === trace.selected ? "› " : "  "}</Text>
          <ToolRow part={child} expanded={trace.detailed.includes(String(index))} titleOnly={!trace.detailed.includes(String(index))} spinner={spinner} />
        </Box>
      ))}
      {hidden > 0 ? <Text dimColor>  … {hidden} more call{hidden === 1 ? "" : "s"} (Ctrl+X L)</Text> : null}
    </Box>
  );
}
