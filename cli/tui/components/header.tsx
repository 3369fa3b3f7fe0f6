// The header: the Session's short id and title, the model and agent the next Turn will use
// (with the selected effort), and live context-window use.
import { Box, Text } from "ink";
import type { Session } from "../../../clients/index.js";
import { contextLine, shortId } from "../format.js";

export interface HeaderProps {
  readonly session: Session | undefined;
  readonly model: string | undefined;
  readonly effort: string | undefined;
  readonly agent: string | undefined;
  /** Set while viewing a sub-agent: the parent chain's depth. */
  readonly depth: number;
}

export function Header({ session, model, effort, agent, depth }: HeaderProps) {
  const context = contextLine(session?.contextUse);
  return (
    <Box borderStyle="round" borderColor="gray" paddingX={1} justifyContent="space-between">
      <Text wrap="truncate-end">
        <Text bold>ze</Text>
        {session ? <Text dimColor> {shortId(session.id)}</Text> : null}
        {depth > 0 ? <Text color="magenta"> sub-agent{session?.agent ? ` ${session.agent}` : ""}</Text> : null}
        {session?.title ? <Text> {session.title}</Text> : null}
      </Text>
      <Text> </Text>
      <Text>
        <Text color="green">{model ?? "default model"}</Text>
        {effort ? <Text color="green"> ({effort})</Text> : null}
        <Text dimColor> · </Text>
        <Text color="blue">{agent ?? "default agent"}</Text>
        {context ? <Text dimColor> · {context}</Text> : null}
      </Text>
    </Box>
  );
}
