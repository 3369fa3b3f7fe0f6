// `ze-harness --wizard [COMMAND…]`: wizard mode. On a terminal it asks for the command (when the
// command line does not name one), then for each of its arguments and its own flags not given
// yet — Enter skips an optional one — shows the assembled command line on stderr and runs it.
// The questions go to stderr, so the command's stdout stays its own. Without a terminal it is a
// usage error: there is no one to ask.
import { createInterface } from "node:readline/promises";
import { usageError } from "./errors.js";
import { splitCommandLine } from "./main.js";
import type { ArgSpec, FlagSpec } from "./spec.js";
import { commandIds, isCommandId, isTopic, loadCommand } from "./table.js";

type Ask = (question: string) => Promise<string>;

const quoteWord = (word: string): string => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`);

/** The next words that may follow `words` (subcommands and topics), for the prompt. */
function nextWords(words: readonly string[]): string[] {
  const prefix = words.length === 0 ? "" : `${words.join(":")}:`;
  const found = new Set<string>();
  for (const id of commandIds) if (id.startsWith(prefix)) found.add(id.slice(prefix.length).split(":")[0]!);
  return [...found].sort();
}

async function askCommand(ask: Ask, given: readonly string[]): Promise<string[]> {
  let words = [...given];
  while (!isCommandId(words.join(":"))) {
    const answer = (await ask(`${words.length === 0 ? "Command" : `${words.join(" ")} …`} (${nextWords(words).join(", ")}): `)).trim();
    if (answer === "") continue;
    const candidate = [...words, ...answer.split(/\s+/)];
    const id = candidate.join(":");
    if (isCommandId(id) || isTopic(id)) words = candidate;
    else process.stderr.write(`no command ${candidate.join(" ")}\n`);
  }
  return words;
}

function describe(spec: ArgSpec | FlagSpec): string {
  return `${spec.description}${spec.options ? ` (${spec.options.join(", ")})` : ""}`;
}

/** The argv to run, or an exit code (no terminal). */
export async function runWizard(argv: readonly string[]): Promise<readonly string[] | number> {
  if (process.stdin.isTTY !== true || process.stderr.isTTY !== true) {
    process.stderr.write(`error: ${usageError("--wizard asks on an interactive terminal; give the command line in full instead").message}\n`);
    return 2;
  }
  const { words: given, globals, rest } = splitCommandLine(argv);
  const readline = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
  const ask: Ask = (question) => readline.question(question);
  try {
    const words = await askCommand(ask, given);
    const spec = await loadCommand(words.join(":") as Parameters<typeof loadCommand>[0]);
    process.stderr.write(`${words.join(" ")}: ${spec.summary}\n`);
    const positional = rest.filter((token) => !token.startsWith("-"));
    const answers: string[] = [];
    for (const [index, [name, arg]] of Object.entries(spec.args ?? {}).entries()) {
      if (index < positional.length) continue;
      const label = arg.name ?? name.toUpperCase();
      for (;;) {
        const value = await ask(`${label} — ${describe(arg)}${arg.required ? "" : " [Enter to skip]"}: `);
        if (value !== "") {
          answers.push(value);
          break;
        }
        if (!arg.required) break;
      }
    }
    const flags: string[] = [];
    for (const [name, flag] of Object.entries(spec.flags ?? {})) {
      if (rest.some((token) => token === `--${name}` || token.startsWith(`--${name}=`))) continue;
      if (flag.type === "boolean") {
        if (/^y(es)?$/i.test((await ask(`--${name} — ${describe(flag)} [y/N]: `)).trim())) flags.push(`--${name}`);
        continue;
      }
      const value = await ask(`--${name} — ${describe(flag)} [Enter to skip]: `);
      if (value !== "") flags.push(`--${name}`, value);
    }
    const command = [...globals, ...words, ...rest, ...answers, ...flags];
    process.stderr.write(`ze-harness ${command.map(quoteWord).join(" ")}\n`);
    return command;
  } finally {
    readline.close();
  }
}
