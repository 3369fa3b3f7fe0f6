// The composer: the draft (several lines with Shift+Enter, Ctrl+J or Alt+Enter) and the cursor at its end.
import { Box, Text } from "ink";

export function Composer({ text, placeholder, label }: { readonly text: string; readonly placeholder: string; readonly label?: string }) {
  return (
    <Box borderStyle="round" borderColor="cyan" paddingX={1} flexDirection="column">
      {label ? <Text dimColor>{label}</Text> : null}
      {text === "" ? (
        <Text>
          <Text inverse> </Text>
          <Text dimColor>{placeholder}</Text>
        </Text>
      ) : (
        <Text>
          {text}
          <Text inverse> </Text>
        </Text>
      )}
    </Box>
  );
}
