// The images attached to the draft, above the input: `[image 1] shot.png · image/png · 12 KB`.
import { Box, Text } from "ink";
import { attachmentLine, type Attachment } from "../state/images.js";

export function Attachments({ items }: { readonly items: readonly Attachment[] }) {
  return (
    <Box flexDirection="column" paddingX={1}>
      {items.map((item, index) => (
        <Text key={item.id} color="magenta">
          {attachmentLine(item, index)}
        </Text>
      ))}
      <Text dimColor>Enter sends {items.length === 1 ? "it" : "them"} with the prompt · Ctrl+X R removes the last</Text>
    </Box>
  );
}
