// The built-in agents, shaped after OpenCode's: `build` (the fallback default, every tool),
// `plan` (primary, no edits, read-only shell or ask), `general` (sub-agent with build's tools)
// and `explore` (read-only sub-agent).
//
// Agent rules are the LAST permission layer (defaults → server → Session → agent) and the last
// matching rule wins, so every rule here overrides the user's rules for what it matches. They
// therefore restrict (deny/ask) wherever possible; the only `allow`s are plan's and explore's
// read-only shell commands, which would otherwise be asked or denied by those agents' own
// `shell *` rule.
import type { PermissionRule } from "../../generated/client/types.gen.js";
import type { AgentDefinition } from "./agents.js";

/** The built-in agent preferred as the default when none is configured. */
export const DEFAULT_BUILTIN_AGENT = "build";

/**
 * Shell commands that only read, after OpenCode's plan agent. The ` *` form also matches the
 * bare command (`ls`) but not a longer program name (`lsof`). Dropped from OpenCode's list:
 * `less`/`more` (`-o` writes a log file) and `uniq` (`uniq IN OUT` writes OUT).
 */
export const READ_ONLY_SHELL_COMMANDS: readonly string[] = Object.freeze([
  "cat *", "cut *", "diff *", "du *", "file *", "find *", "git branch", "git branch -v", "git diff", "git diff *",
  "git log", "git log *", "git show", "git show *", "git status", "git status *", "grep *", "head *", "ls", "ls *",
  "pwd", "pwd *", "rg *", "sort *", "stat *", "tail *", "tree", "tree *", "wc *", "whereis *", "which *",
]);

/**
 * Options of the commands above that write files or run other programs. Patterns are loose on
 * purpose: `find *-delete*` also catches `find -delete` (no path) and a false match only falls
 * back to the agent's ask/deny. Known gap: a short flag bundled behind another (`sort -ro out`).
 */
export const WRITING_SHELL_OPTIONS: readonly string[] = Object.freeze([
  "find *-delete*", "find *-exec*", "find *-ok*", "find *-fprint*", "find *-fls*", "sort *-o*", "tree *-o*",
  "git *--output*", "rg *--pre*", "file *-C*",
]);

/**
 * The shell resource is the raw command text, so `ls *` alone would admit `ls; rm -rf x`.
 * Lists, pipes, redirection, substitution and multiple lines fall back to the agent's ask/deny.
 */
export const SHELL_OPERATORS: readonly string[] = Object.freeze(["*;*", "*&*", "*|*", "*>*", "*<(*", "*`*", "*$(*", "*\n*"]);

/** `shell *` → `otherwise`; read-only commands allowed; writing options and operators → `otherwise` again (last match wins). */
export function readOnlyShellRules(otherwise: "ask" | "deny"): PermissionRule[] {
  return [
    { action: "shell", resource: "*", effect: otherwise },
    ...READ_ONLY_SHELL_COMMANDS.map((resource): PermissionRule => ({ action: "shell", resource, effect: "allow" })),
    ...[...WRITING_SHELL_OPTIONS, ...SHELL_OPERATORS].map((resource): PermissionRule => ({ action: "shell", resource, effect: otherwise })),
  ];
}

// `write` and `edit` both authorize as action `edit`.
const NO_EDITS: PermissionRule = { action: "edit", resource: "*", effect: "deny" };

/** A deeply frozen copy: catalogs hand the same definitions to many Turns. */
export function freezeAgent(agent: AgentDefinition): AgentDefinition {
  const { tools } = agent;
  const frozenTools: AgentDefinition["tools"] =
    tools.mode === "include"
      ? Object.freeze({
          mode: "include" as const,
          names: Object.freeze([...tools.names]) as unknown as readonly [string, ...string[]],
          ...(tools.optionalNames && { optionalNames: Object.freeze([...tools.optionalNames]) }),
        })
      : Object.freeze({ mode: tools.mode });
  const permissions = Object.freeze(agent.permissions.map((rule) => Object.freeze({ ...rule })));
  return Object.freeze({ ...agent, permissions, tools: frozenTools });
}

const DECLARATIONS: AgentDefinition[] = [
    {
      id: "build",
      displayName: "Build",
      description: "The default agent for development work: reads, writes and edits files and runs shell commands as the configured permissions allow.",
      system:
        "You are the build agent: a software engineer working in the user's workspace. Read the relevant code before changing it, make focused changes, run commands to check your work, and finish with a short report of what you changed and anything left undone.",
      mode: "primary",
      permissions: [],
      tools: { mode: "all" },
      origin: "builtin",
      fallbackDefault: true,
    },
    {
      id: "plan",
      displayName: "Plan",
      description: "Plan mode: analyses the code and proposes a plan without changing anything. File edits are denied; shell commands other than simple read-only ones need approval.",
      system:
        "You are in plan mode: investigate and plan, do not change anything. File edits are denied, and shell commands other than simple read-only ones (ls, find, grep, rg, git status/diff/log/show, head, tail, wc) need the user's approval, as do pipes, redirection and chained commands. Use read, read-only commands and webfetch to understand the task, ask the user when requirements are unclear, then present a concrete step-by-step plan that names the files to change.",
      mode: "primary",
      // OpenCode's plan agent: edits denied, read-only shell allowed and everything else asked,
      // no delegation to `general` (which can edit). OpenCode's exception for plan files is not
      // carried over: Ze has no plan-file location.
      permissions: [NO_EDITS, ...readOnlyShellRules("ask"), { action: "task", resource: "general", effect: "deny" }],
      // `write`/`edit` are not offered at all: the `edit` deny would not hide them (tools are
      // hidden by their own id). `task` and `skill` are optional until those tools exist.
      tools: { mode: "include", names: ["read", "shell", "webfetch", "question", "pause"], optionalNames: ["task", "skill"] },
      origin: "builtin",
    },
    {
      id: "general",
      displayName: "General",
      description: "General-purpose agent for researching complex questions and executing multi-step tasks, with the same tools as build. Use it to run several independent units of work in parallel.",
      system:
        "You are a general-purpose sub-agent. Complete the task you were given end to end — research, edit files and run commands as needed — then reply with a concise report of what you found or changed, with file paths. Your reply is all the calling agent sees.",
      mode: "subagent",
      permissions: [],
      tools: { mode: "all" },
      origin: "builtin",
    },
    {
      id: "explore",
      displayName: "Explore",
      description:
        'Fast read-only agent for exploring a codebase: finds files by name or pattern, searches code for keywords and answers questions about how the code works. Say how thorough it should be: "quick", "medium" or "very thorough".',
      system:
        "You are a fast, read-only exploration sub-agent. Find files, search code and answer questions about the codebase; never try to modify anything. Use read for files and directories. The shell accepts only simple read-only commands (ls, find, grep, rg, git status/diff/log/show, head, tail, wc, stat) without pipes, redirection or chaining; anything else is denied. Match the thoroughness you were asked for and reply with concise findings, citing file paths and line numbers.",
      mode: "subagent",
      // Read-only: no edits, shell limited to the read-only commands (everything else denied).
      permissions: [NO_EDITS, ...readOnlyShellRules("deny")],
      tools: { mode: "include", names: ["read", "shell", "webfetch"] },
      origin: "builtin",
    },
];

export const BUILTIN_AGENTS: readonly AgentDefinition[] = Object.freeze(DECLARATIONS.map(freezeAgent));
