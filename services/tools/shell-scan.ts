// The shell tool's outside-workdir heuristic. It tokenizes a command line roughly as `sh` would
// (quotes, backslashes, operators, redirections, comments), then treats as path candidates:
// every redirection target, and the non-option arguments of well-known file commands. Each
// candidate that resolves outside the workdir yields an `external_directory` resource
// (`<dir>/*`). Words built from `$…` or backquotes are skipped (their value is unknown), a glob
// is cut back to its fixed directory prefix, `~`/`~/` expands to the home directory (the shell
// would do so), and the terminal devices (`/dev/null`, `/dev/std*`, `/dev/tty`, `/dev/fd/*`) are
// ignored. This is not containment: the command still runs with the server user's authority.
import { homedir } from "node:os";
import { basename } from "node:path";
import { resolveFileTarget } from "./paths.js";

interface Word {
  readonly kind: "word";
  readonly text: string;
  /** Contains parameter expansion or command substitution. */
  readonly dynamic: boolean;
}
interface Operator {
  readonly kind: "op";
  readonly text: string;
}
type Token = Word | Operator;

const SEPARATORS = new Set([";", "&", "&&", "|", "||", "|&", "\n", "(", ")", ";;"]);
const REDIRECTIONS = new Set([">", ">>", "<", ">|", "&>", "&>>", "<>", ">&", "<&"]);

/** Commands whose non-option arguments are (mostly) paths. */
export const FILE_COMMANDS: ReadonlySet<string> = new Set([
  "cat", "less", "more", "head", "tail", "ls", "cd", "pushd", "rm", "rmdir", "cp", "mv", "mkdir", "touch",
  "chmod", "chown", "chgrp", "ln", "find", "grep", "egrep", "fgrep", "rg", "sed", "awk", "tee", "diff", "cmp",
  "stat", "file", "wc", "sort", "uniq", "du", "df", "tar", "zip", "unzip", "gzip", "gunzip", "readlink",
  "realpath", "truncate", "source", ".", "vi", "vim", "nano", "nl", "od", "xxd", "hexdump", "strings",
  "install", "rsync", "scp", "shred", "tree", "bat",
]);

/** Prefix commands that run their arguments as another command. */
const WRAPPERS = new Set(["sudo", "env", "command", "exec", "nohup", "time", "nice", "builtin"]);

const IGNORED_PATHS = new Set(["/dev/null", "/dev/stdin", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/zero", "/dev/random", "/dev/urandom"]);

export function tokenize(command: string): Token[] {
  const tokens: Token[] = [];
  let word = "";
  let inWord = false;
  let dynamic = false;
  const endWord = () => {
    if (inWord) tokens.push({ kind: "word", text: word, dynamic });
    word = "";
    inWord = false;
    dynamic = false;
  };
  let i = 0;
  while (i < command.length) {
    const c = command[i]!;
    if (c === " " || c === "\t") {
      endWord();
      i++;
    } else if (c === "#" && !inWord) {
      while (i < command.length && command[i] !== "\n") i++;
    } else if (c === "'") {
      inWord = true;
      const close = command.indexOf("'", i + 1);
      const end = close === -1 ? command.length : close;
      word += command.slice(i + 1, end);
      i = end + 1;
    } else if (c === '"') {
      inWord = true;
      i++;
      while (i < command.length && command[i] !== '"') {
        const d = command[i]!;
        if (d === "\\" && i + 1 < command.length && '"\\$`\n'.includes(command[i + 1]!)) {
          word += command[i + 1];
          i += 2;
          continue;
        }
        if (d === "$" || d === "`") dynamic = true;
        word += d;
        i++;
      }
      i++;
    } else if (c === "\\") {
      inWord = true;
      if (i + 1 < command.length && command[i + 1] !== "\n") word += command[i + 1];
      i += 2;
    } else if (";&|()\n<>".includes(c)) {
      // A word of digits right before a redirection is a file descriptor (`2>`), not an argument.
      if ((c === ">" || c === "<") && inWord && /^\d+$/.test(word)) {
        word = "";
        inWord = false;
      }
      endWord();
      let op = c;
      const next = command[i + 1];
      const two = next === undefined ? op : op + next;
      if (["&&", "||", ";;", "|&", ">>", ">|", "&>", "<>", ">&", "<&"].includes(two)) op = two;
      if (op === "&>" && command[i + 2] === ">") op = "&>>";
      tokens.push({ kind: "op", text: op });
      i += op.length;
    } else {
      if (c === "$" || c === "`") dynamic = true;
      inWord = true;
      word += c;
      i++;
    }
  }
  endWord();
  return tokens;
}

/** Path-like arguments of the command line (redirection targets and file-command arguments). */
export function pathCandidates(command: string): string[] {
  const candidates: string[] = [];
  let segment: Word[] = [];
  let commandWord: string | undefined;
  let redirectNext = false;
  const flush = () => {
    segment = [];
    commandWord = undefined;
  };
  for (const token of tokenize(command)) {
    if (token.kind === "op") {
      if (SEPARATORS.has(token.text)) {
        flush();
        redirectNext = false;
      } else if (REDIRECTIONS.has(token.text)) {
        redirectNext = true;
      }
      continue;
    }
    if (redirectNext) {
      redirectNext = false;
      if (!token.dynamic && !/^\d+$/.test(token.text) && token.text !== "-") candidates.push(token.text);
      continue;
    }
    segment.push(token);
    if (commandWord === undefined) {
      if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(token.text) || WRAPPERS.has(token.text)) continue;
      commandWord = basename(token.text);
      continue;
    }
    if (FILE_COMMANDS.has(commandWord) && !token.dynamic && !token.text.startsWith("-")) candidates.push(token.text);
  }
  return candidates;
}

function expandCandidate(candidate: string): string | undefined {
  let path = candidate;
  if (path === "~" || path.startsWith("~/")) path = homedir() + path.slice(1);
  else if (path.startsWith("~")) return undefined; // ~user: unknown
  const glob = path.search(/[*?[]/);
  if (glob !== -1) {
    const slash = path.lastIndexOf("/", glob);
    if (slash === -1) return undefined; // a relative glob in the current directory
    path = path.slice(0, slash + 1) || "/";
  }
  if (path === "" || IGNORED_PATHS.has(path) || path.startsWith("/dev/fd/")) return undefined;
  return path;
}

/** `external_directory` resources (`<dir>/*`) for candidates outside the workdir, deduplicated. */
export function externalDirectoriesOf(command: string, workdir: string): string[] {
  const found = new Set<string>();
  for (const candidate of pathCandidates(command)) {
    const path = expandCandidate(candidate);
    if (path === undefined) continue;
    try {
      const target = resolveFileTarget(workdir, path);
      if (target.externalDirectory) found.add(target.externalDirectory.resource);
    } catch {
      // An unresolvable candidate is not a path we can reason about.
    }
  }
  return [...found];
}
