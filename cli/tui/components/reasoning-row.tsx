// Reasoning: an expandable block whose header shows the observed thinking duration once the
// block finished, alongside a first-line preview.
import { Box, Text } from "ink";
import type { ReasoningTurnPart } from "../../../clients/index.js";
import { duration, firstLine } from "../format.js";

export function ReasoningRow({ part, expanded, running }: { readonly part: ReasoningTurnPart; readonly expanded: boolean; readonly running: boolean }) {
  const took = part.startedAt !== undefined && part.completedAt !== undefined ? duration(part.completedAt - part.startedAt) : undefined;
  const label = took !== undefined ? `Thought for ${took}` : running ? "Thinking…" : "Thought";
  return (
    <Box flexDirection="column">
      <Text dimColor italic>
        {expanded ? "▾" : "▸"} {label}
        {expanded ? "" : ` · ${firstLine(part.text, 60)}`}
      </Text>
      {expanded ? (
        <Box paddingLeft={2}>
          <Text dimColor italic>
            {part.text.trim()}
          </Text>
        </Box>
      ) : null}
    </Box>
  );
}
