import { flagsOf } from "../parse.js";
import { arg, defineCommand } from "../spec.js";
import { commandIds, loadCommand } from "../table.js";

/** Commands and their flags, as the shell should complete them. */
interface CompletionEntry {
  readonly words: readonly string[];
  readonly flags: readonly string[];
}

export default defineCommand({
  summary: "Print a shell completion script (bash, zsh, fish or sh).",
  description:
    "Add `source <(ze-harness completions bash)` to ~/.bashrc, `source <(ze-harness completions zsh)` to ~/.zshrc, or `ze-harness completions fish | source` to fish's config; or write the script to a file: `ze-harness completions bash > ~/.local/share/bash-completion/completions/ze-harness`. " +
    "`sh` prints the script for POSIX shells that have bash's `complete` builtin (bash in sh mode). `ze-harness --completions SHELL` is the same.",
  examples: ["<%= config.bin %> completions bash > ~/.local/share/bash-completion/completions/ze-harness", "<%= config.bin %> completions zsh > ~/.zsh/completions/_ze-harness", "<%= config.bin %> completions fish > ~/.config/fish/completions/ze-harness.fish"],
  args: { shell: arg.string({ description: "Shell to complete.", required: true, options: ["bash", "zsh", "fish", "sh"] }) },
  async run({ args }) {
    const entries: CompletionEntry[] = await Promise.all(
      commandIds.map(async (id) => ({ words: id.split(":"), flags: Object.keys(flagsOf(await loadCommand(id))).map((name) => `--${name}`) })),
    );
    entries.sort((a, b) => a.words.join(" ").localeCompare(b.words.join(" ")));
    const bin = "ze-harness";
    const script = args.shell === "bash" ? bash(bin, entries) : args.shell === "sh" ? sh(bin, entries) : args.shell === "zsh" ? zsh(bin, entries) : fish(bin, entries);
    process.stdout.write(script);
  },
});

const fn = (bin: string): string => `_${bin.replace(/[^a-zA-Z0-9]/g, "_")}`;

/** `case` table: the typed command path → the words that may follow it. */
function candidatesByPrefix(entries: readonly CompletionEntry[]): Map<string, Set<string>> {
  const table = new Map<string, Set<string>>();
  const add = (prefix: string, word: string): void => {
    const set = table.get(prefix) ?? new Set<string>();
    set.add(word);
    table.set(prefix, set);
  };
  for (const entry of entries) {
    for (let index = 0; index < entry.words.length; index++) add(entry.words.slice(0, index).join(" "), entry.words[index]!);
    for (const flag of entry.flags) add(entry.words.join(" "), flag);
  }
  return table;
}

function bash(bin: string, entries: readonly CompletionEntry[]): string {
  const cases = [...candidatesByPrefix(entries)]
    .map(([prefix, words]) => `    ${JSON.stringify(prefix)}) options=${JSON.stringify([...words].join(" "))} ;;`)
    .join("\n");
  return `# ${bin} bash completion
${fn(bin)}() {
  local current="\${COMP_WORDS[COMP_CWORD]}" path="" word options=""
  for word in "\${COMP_WORDS[@]:1:COMP_CWORD-1}"; do
    case "$word" in -*) ;; *) path="\${path:+$path }$word" ;; esac
  done
  case "$path" in
${cases}
  esac
  COMPREPLY=( $(compgen -W "$options" -- "$current") )
}
complete -F ${fn(bin)} ${bin}
`;
}

/** The bash script without bash-only syntax in its header: for sh-mode shells with `complete`. */
function sh(bin: string, entries: readonly CompletionEntry[]): string {
  return `# ${bin} sh completion (needs the \`complete\` builtin, as bash has also in sh mode)
${bash(bin, entries).split("\n").slice(1).join("\n")}`;
}

function zsh(bin: string, entries: readonly CompletionEntry[]): string {
  return `#compdef ${bin}
autoload -U +X bashcompinit && bashcompinit
${bash(bin, entries).split("\n").slice(1).join("\n")}`;
}

function fish(bin: string, entries: readonly CompletionEntry[]): string {
  const lines = [`# ${bin} fish completion`, `complete -c ${bin} -f`];
  for (const [prefix, words] of candidatesByPrefix(entries)) {
    const typed = prefix === "" ? [] : prefix.split(" ");
    const condition = typed.length === 0 ? "__fish_use_subcommand" : `__fish_seen_subcommand_from ${typed[typed.length - 1]}`;
    for (const word of words) {
      if (word.startsWith("--")) lines.push(`complete -c ${bin} -n '${condition}' -l ${word.slice(2)}`);
      else lines.push(`complete -c ${bin} -n '${condition}' -a ${word}`);
    }
  }
  return `${lines.join("\n")}\n`;
}
