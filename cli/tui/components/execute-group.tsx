// A CodeMode `execute` call as one group: collapsed, one line with its state, how many calls the
// script made and with which tools, and the elapsed time (live while it runs); expanded (Ctrl+X
// T), the script's source, its nested calls as indented rows (each in the direct tool row's
// format) and its output. Every part is bounded so a frame never grows without limit.
import { Box, Text } from "ink";
import type { ToolTurnPart } from "../../../clients/index.js";
import { duration, firstLine, groupSummary, isExecuteGroup, toolOutput } from "../format.js";
import { ToolRow } from "./tool-row.js";

const SOURCE_LINES = 30;
const OUTPUT_LINES = 50;
const CHILD_ROWS = 20;

export interface ExecuteGroupProps {
  readonly part: ToolTurnPart;
  /** The script's calls, in script order. */
  readonly children: readonly ToolTurnPart[];
  readonly expanded: boolean;
  readonly spinner: string;
  /** The time for a running group's elapsed figure (defaults to now). */
  readonly now?: number;
}

/** At most `max` lines of `text`, each cut to 200 characters, with a note of what is left out. */
function bounded(text: string, max: number): { readonly shown: string; readonly hidden: number } {
  const lines = text.replace(/\s+$/, "").split("\n");
  return { shown: lines.slice(0, max).map((line) => (line.length > 200 ? `${line.slice(0, 199)}…` : line) || " ").join("\n"), hidden: Math.max(0, lines.length - max) };
}

function Section({ title, text, max }: { readonly title: string; readonly text: string; readonly max: number }) {
  const { shown, hidden } = bounded(text, max);
  return (
    <Box flexDirection="column" paddingLeft={2}>
      <Text dimColor bold>
        {title}
      </Text>
      <Box paddingLeft={2} flexDirection="column">
        <Text dimColor>{shown}</Text>
        {hidden > 0 ? <Text dimColor>… {hidden} more line{hidden === 1 ? "" : "s"}</Text> : null}
      </Box>
    </Box>
  );
}

export function ExecuteGroup({ part, children, expanded, spinner, now = Date.now() }: ExecuteGroupProps) {
  const running = part.state === "requested";
  const failed = part.state === "failed" || part.state === "denied";
  const mark = running ? <Text color="yellow">{spinner}</Text> : failed ? <Text color="red">✗</Text> : <Text color="green">✓</Text>;
  const took = duration((part.completedAt ?? now) - part.requestedAt);
  const waiting = children.some((child) => child.approval.state === "pending")
    ? " · waiting for approval"
    : children.some((child) => child.question?.state === "pending")
      ? " · waiting for an answer"
      : "";
  const code = (part.input as { code?: unknown } | undefined)?.code;
  const output = running ? (part.activity?.preview ?? "") : toolOutput(part);
  const shownChildren = children.slice(0, CHILD_ROWS);
  return (
    <Box flexDirection="column">
      <Text>
        {mark} execute · {groupSummary(children)}
        <Text dimColor>
          {" "}
          · {took}
          {waiting}
        </Text>
      </Text>
      {!expanded && failed ? <Text color="red">  {firstLine(toolOutput(part), 200)}</Text> : null}
      {expanded && typeof code === "string" ? <Section title="source" text={code} max={SOURCE_LINES} /> : null}
      {expanded && children.length > 0 ? (
        <Box flexDirection="column" paddingLeft={2}>
          <Text dimColor bold>
            calls
          </Text>
          <Box flexDirection="column" paddingLeft={2}>
            {shownChildren.map((child) => (
              <ToolRow key={child.id} part={child} expanded={false} spinner={spinner} />
            ))}
            {children.length > shownChildren.length ? <Text dimColor>… {children.length - shownChildren.length} more calls</Text> : null}
          </Box>
        </Box>
      ) : null}
      {expanded && output !== "" ? <Section title={running ? "console" : "output"} text={output} max={OUTPUT_LINES} /> : null}
      {expanded && part.artifact ? <Text dimColor>  full output: {part.artifact.path}</Text> : null}
    </Box>
  );
}

/** A tool part's row: an `execute` call as its group, any other call as a tool row. */
export function ToolEntry({ part, children, expanded, spinner, subagent }: { readonly part: ToolTurnPart; readonly children?: readonly ToolTurnPart[] | undefined; readonly expanded: boolean; readonly spinner: string; readonly subagent?: string | undefined }) {
  if (isExecuteGroup(part)) return <ExecuteGroup part={part} children={children ?? []} expanded={expanded} spinner={spinner} />;
  return <ToolRow part={part} expanded={expanded} spinner={spinner} subagent={subagent} />;
}
