// One Turn: the prompt (with its author), its parts in order, and under a settled Turn the
// model and elapsed execution time (queue wait excluded) or how it ended.
import { Box, Text } from "ink";
import type { Turn } from "../../../clients/index.js";
import { codemodeParent, duration, executionMs, executeChildren, promptText, shortId } from "../format.js";
import { ToolEntry } from "./execute-group.js";
import { ReasoningRow } from "./reasoning-row.js";
import { colorWanted, renderMarkdown } from "../markdown.js";

export interface TurnViewProps {
  readonly turn: Turn;
  readonly clientId: string;
  /** This machine's author identity (state/author.ts). */
  readonly authorId?: string | undefined;
  readonly expanded: ReadonlySet<string>;
  readonly spinner: string;
  /** A sub-agent's one-line summary by child Session id. */
  readonly childSummary?: (childSessionId: string) => string | undefined;
  /** While the Turn runs: show at most this many (wrapped) lines of each text part, the latest. */
  readonly maxLines?: number;
  readonly width?: number;
}

/** A text part as Markdown; a running Turn's cut to its last `maxLines` rows, a settled Turn's in full. */
function tail(text: string, maxLines: number | undefined, width: number): string {
  const rendered = renderMarkdown(text, Math.max(20, width - 1), colorWanted(), maxLines === undefined ? undefined : maxLines * width * 2);
  return maxLines === undefined ? rendered : rendered.split("\n").slice(-maxLines).join("\n");
}

/** `you` for this machine's author identity (or, for entries without one, this connection); a short ID otherwise. */
export function author(attribution: Turn["attribution"], clientId: string, authorId?: string): string {
  if (!attribution) return "you";
  if (attribution.authorId !== undefined) return attribution.authorId === authorId ? "you" : shortId(attribution.authorId);
  return attribution.clientId === clientId ? "you" : shortId(attribution.clientId.replace(/^.*\//, ""));
}

function Footer({ turn }: { readonly turn: Turn }) {
  const outcome = turn.outcome;
  if (!outcome) return turn.phase === "pending" ? <Text dimColor>queued</Text> : null;
  const took = executionMs(turn);
  const detail = `${turn.model}${took !== undefined ? ` · ${duration(took)}` : ""}`;
  switch (outcome.kind) {
    case "completed":
      return <Text dimColor>{detail}</Text>;
    case "cancelled":
      return <Text color="yellow">cancelled{outcome.reason ? `: ${outcome.reason}` : ""} · {detail}</Text>;
    case "failed":
      return <Text color="red">failed: {outcome.fault.code}: {outcome.fault.message}</Text>;
    case "limit_reached":
      return <Text color="red">stopped at a limit: {outcome.limit.name}: {outcome.diagnostic.message}</Text>;
  }
}

export function TurnView({ turn, clientId, authorId, expanded, spinner, childSummary, maxLines, width = 80 }: TurnViewProps) {
  const running = turn.outcome === undefined;
  const cut = running ? maxLines : undefined;
  // Calls made from an `execute` script are rows of its group, not of the Turn.
  const groups = executeChildren(turn.parts);
  return (
    <Box flexDirection="column" marginBottom={1}>
      <Text>
        <Text color="cyan" bold>
          › {author(turn.attribution, clientId, authorId)}
        </Text>{" "}
        {promptText(turn)}
      </Text>
      {turn.parts.map((part) => {
        switch (part.type) {
          case "text":
            return part.text === "" ? null : <Text key={part.id}>{tail(part.text, cut, width)}</Text>;
          case "refusal":
            return <Text key={part.id} color="red">{part.text}</Text>;
          case "reasoning":
            return <ReasoningRow key={part.id} part={part} expanded={expanded.has(part.id)} running={running} />;
          case "tool": {
            const parent = codemodeParent(part);
            if (parent !== undefined && groups.has(parent)) return null;
            return (
              <ToolEntry
                key={part.id}
                part={part}
                children={groups.get(part.toolCallId)}
                expanded={expanded.has(part.id)}
                spinner={spinner}
                subagent={part.activity?.childSessionId !== undefined ? childSummary?.(part.activity.childSessionId) : undefined}
              />
            );
          }
          case "steering":
            return (
              <Text key={part.id} color="cyan">
                ↳ {part.steers.map((steer) => steer.prompt.map((item) => (item.type === "text" ? item.text : "[image]")).join(" ")).join(" · ")}
              </Text>
            );
        }
      })}
      <Footer turn={turn} />
    </Box>
  );
}
