// An inline permission request: the action and resources, and Allow once / Allow always /
// Reject (←/→/Tab choose, Enter replies, Esc rejects).
import { Box, Text } from "ink";
import type { PermissionReply, PermissionRequest } from "../../../clients/index.js";

export const PERMISSION_CHOICES: readonly { readonly reply: PermissionReply; readonly label: string }[] = [
  { reply: "once", label: "Allow once" },
  { reply: "always", label: "Allow always" },
  { reply: "reject", label: "Reject" },
];

export function PermissionPrompt({ request, selected, agent }: { readonly request: PermissionRequest; readonly selected: number; readonly agent?: string | undefined }) {
  return (
    <Box borderStyle="round" borderColor="yellow" paddingX={1} flexDirection="column">
      <Text>
        <Text color="yellow" bold>
          Permission{agent ? ` (sub-agent ${agent})` : ""}:
        </Text>{" "}
        {request.action} <Text bold>{request.resources.join(" ")}</Text>
      </Text>
      {request.save && request.save.length > 0 ? <Text dimColor>Allow always saves: {request.save.join(", ")}</Text> : null}
      <Box gap={2}>
        {PERMISSION_CHOICES.map((choice, index) => (
          <Text key={choice.reply} {...(index === selected ? { inverse: true, bold: true } : {})}>
            {" "}
            {choice.label}{" "}
          </Text>
        ))}
      </Box>
    </Box>
  );
}
