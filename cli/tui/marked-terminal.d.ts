// marked-terminal 7 ships no types: the one export the TUI uses (cli/tui/markdown.ts).
declare module "marked-terminal" {
  export function markedTerminal(options?: Record<string, unknown>, highlightOptions?: Record<string, unknown>): unknown;
}
