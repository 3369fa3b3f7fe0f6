// A picker overlay: a title, a filter query, a window of items around the selection, and
// its keys. Multi-select pickers mark chosen items.
import { Box, Text } from "ink";

export interface PickerItem {
  readonly id: string;
  readonly label: string;
  readonly detail?: string;
  readonly marked?: boolean;
}

const WINDOW = 10;

export function Picker(props: {
  readonly title: string;
  readonly query: string;
  readonly items: readonly PickerItem[];
  readonly selected: number;
  readonly hint: string;
  readonly loading?: boolean;
  readonly error?: string | undefined;
}) {
  const { title, query, items, selected, hint } = props;
  const start = Math.max(0, Math.min(selected - Math.floor(WINDOW / 2), items.length - WINDOW));
  const shown = items.slice(start, start + WINDOW);
  return (
    <Box borderStyle="round" borderColor="magenta" paddingX={1} flexDirection="column">
      <Text>
        <Text color="magenta" bold>
          {title}
        </Text>
        <Text dimColor> {query ? `filter: ${query}` : "type to filter"}</Text>
      </Text>
      {props.loading ? <Text dimColor>loading…</Text> : null}
      {props.error ? <Text color="red">{props.error}</Text> : null}
      {!props.loading && items.length === 0 && !props.error ? <Text dimColor>nothing to show</Text> : null}
      {shown.map((item, offset) => {
        const index = start + offset;
        return (
          <Text key={item.id} {...(index === selected ? { color: "cyan" } : {})}>
            {index === selected ? "›" : " "} {item.marked !== undefined ? (item.marked ? "[x] " : "[ ] ") : ""}
            {item.label}
            {item.detail ? <Text dimColor> {item.detail}</Text> : null}
          </Text>
        );
      })}
      <Text dimColor>{hint}</Text>
    </Box>
  );
}
