// The slash-command suggestion menu under the composer.
import { Box, Text } from "ink";
import type { SlashCommand } from "../commands.js";

export function Suggestions({ items, selected }: { readonly items: readonly SlashCommand[]; readonly selected: number }) {
  return (
    <Box flexDirection="column" paddingX={1}>
      {items.map((command, index) => (
        <Text key={command.name} {...(index === selected ? { color: "cyan" } : { dimColor: true })}>
          {index === selected ? "›" : " "} /{command.name}
          {command.args ? ` ${command.args}` : ""} — {command.summary}
        </Text>
      ))}
    </Box>
  );
}
