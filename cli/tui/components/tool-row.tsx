// A tool call: one collapsed line while it runs (its latest activity as a preview), then its
// output under it; output longer than three lines is collapsed with an expansion hint.
import { Box, Text } from "ink";
import type { ToolTurnPart } from "../../../clients/index.js";
import { duration, firstLine, toolOutput, toolSummary } from "../format.js";

const COLLAPSED_LINES = 3;
const EXPANDED_LINES = 200;

export interface ToolRowProps {
  readonly part: ToolTurnPart;
  readonly expanded: boolean;
  readonly spinner: string;
  /** A task row's sub-agent summary (latest tool, or count and duration). */
  readonly subagent?: string | undefined;
  /** Only the title line, no output (the Execute trace's calls without details). */
  readonly titleOnly?: boolean;
}

export function ToolRow({ part, expanded, spinner, subagent, titleOnly = false }: ToolRowProps) {
  const summary = toolSummary(part);
  const background = part.toolId === "task" && /moved to the background/.test(toolOutput(part)) ? " (background)" : "";
  const title = `${part.toolId}${summary ? ` ${summary}` : ""}${subagent ? ` · ${subagent}` : ""}${background}`;
  if (part.state === "requested") {
    const waiting = part.approval.state === "pending" ? " · waiting for approval" : part.question?.state === "pending" ? " · waiting for an answer" : "";
    const preview = part.activity?.preview ?? part.activity?.message;
    return (
      <Box flexDirection="column">
        <Text>
          <Text color="yellow">{spinner}</Text> {title}
          <Text dimColor>{waiting}</Text>
        </Text>
        {expanded && preview ? <Text dimColor>{preview.split("\n").slice(-EXPANDED_LINES).join("\n")}</Text> : null}
        {expanded && part.activity?.artifact ? <Text dimColor>full output: {part.activity.artifact.path}</Text> : null}
      </Box>
    );
  }
  const failed = part.state === "failed" || part.state === "denied";
  const mark = failed ? <Text color="red">✗</Text> : <Text color="green">✓</Text>;
  const took = part.completedAt !== undefined ? ` ${duration(part.completedAt - part.requestedAt)}` : "";
  const lines = toolOutput(part).replace(/\s+$/, "").split("\n").filter((line, index, all) => all.length > 1 || line !== "");
  const shown = titleOnly ? [] : expanded ? lines.slice(0, EXPANDED_LINES) : lines.slice(0, COLLAPSED_LINES);
  const hidden = lines.length - shown.length;
  return (
    <Box flexDirection="column">
      <Text>
        {mark} {title}
        <Text dimColor>
          {part.state === "denied" ? " · denied" : ""}
          {took}
        </Text>
      </Text>
      {shown.length > 0 ? (
        <Box paddingLeft={2} flexDirection="column">
          <Text dimColor>{shown.map((line) => firstLine(line, 200) || " ").join("\n")}</Text>
          {hidden > 0 ? <Text dimColor>… {hidden} more line{hidden === 1 ? "" : "s"} (Ctrl+X T)</Text> : null}
        </Box>
      ) : null}
      {expanded && !titleOnly && part.artifact ? <Text dimColor>  full output: {part.artifact.path}</Text> : null}
    </Box>
  );
}
