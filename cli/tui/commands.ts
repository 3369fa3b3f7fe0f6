// The composer's slash commands: their names, aliases and hints, which of them work before the
// first prompt, the suggestion filter and the parser.

export type CommandName = "new" | "queue" | "steer" | "sessions" | "models" | "effort" | "agents" | "skills" | "fork" | "subagents" | "back" | "image" | "base64" | "send" | "mouse" | "exit";

export interface SlashCommand {
  readonly name: CommandName;
  readonly aliases: readonly string[];
  readonly args: string;
  readonly summary: string;
  /** Listed on the opening screen (works before the first prompt). */
  readonly opening: boolean;
}

export const COMMANDS: readonly SlashCommand[] = [
  { name: "new", aliases: [], args: "[TEXT]", summary: "start a new Session (TEXT: its first prompt)", opening: true },
  { name: "queue", aliases: [], args: "TEXT", summary: "queue TEXT as a later Turn", opening: true },
  { name: "steer", aliases: [], args: "TEXT", summary: "follow up on the running Turn", opening: false },
  { name: "sessions", aliases: [], args: "[QUERY]", summary: "switch to another Session of this project", opening: true },
  { name: "models", aliases: [], args: "[QUERY]", summary: "pick the model for the next Turn", opening: true },
  { name: "effort", aliases: [], args: "[LEVEL|default]", summary: "set the reasoning effort for the next Turn", opening: true },
  { name: "agents", aliases: [], args: "[QUERY]", summary: "pick the agent for the next Turn", opening: false },
  { name: "skills", aliases: [], args: "[QUERY]", summary: "select Skills for the next Turn", opening: true },
  { name: "fork", aliases: [], args: "[SEQUENCE|TURN-ID]", summary: "fork the Session before a Turn", opening: false },
  { name: "subagents", aliases: [], args: "", summary: "open a sub-agent of this Session", opening: false },
  { name: "back", aliases: [], args: "", summary: "return to the parent Session", opening: false },
  { name: "image", aliases: [], args: "PATH", summary: "attach a PNG, JPEG, GIF or WebP file to the draft", opening: true },
  { name: "base64", aliases: [], args: "DATA [MEDIA_TYPE]", summary: "attach base64 image data to the draft", opening: true },
  { name: "send", aliases: [], args: "[TEXT]", summary: "send TEXT with the attached images", opening: true },
  { name: "mouse", aliases: [], args: "[on|off]", summary: "mouse capture (clicks, drag to copy) on or off (off: the terminal selects)", opening: true },
  { name: "exit", aliases: ["quit", "q"], args: "", summary: "quit (Sessions keep running)", opening: true },
];

export interface ParsedCommand {
  readonly command: SlashCommand;
  readonly argument: string;
}

/** `/name rest` → the command and its argument; undefined when `text` is no known command. */
export function parseCommand(text: string): ParsedCommand | undefined {
  const match = /^\/(\S+)(?:\s+([\s\S]*))?$/.exec(text.trim());
  if (!match) return undefined;
  const word = match[1]!.toLowerCase();
  const command = COMMANDS.find((candidate) => candidate.name === word || candidate.aliases.includes(word));
  return command ? { command, argument: (match[2] ?? "").trim() } : undefined;
}

/** The commands offered while the composer holds `/prefix` (no space yet). */
export function suggestions(text: string, opening: boolean): SlashCommand[] {
  if (!text.startsWith("/") || /\s/.test(text)) return [];
  const prefix = text.slice(1).toLowerCase();
  return COMMANDS.filter((command) => (!opening || command.opening) && (command.name.startsWith(prefix) || command.aliases.some((alias) => alias.startsWith(prefix))));
}
