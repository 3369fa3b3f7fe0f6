import { sdk } from "../../../clients/index.js";
import { sessionIdArg } from "../../args.js";
import { jsonCommand } from "../../json-command.js";
import { arg, flag } from "../../spec.js";
import { base64Flag, workspacePathValue } from "../../workspace-path.js";

export default jsonCommand({
  summary: "Print one file's git diff in a Session's workdir as JSON, without running git.",
  description:
    "--area staged compares HEAD to the index, worktree (the default) the index to the working file, untracked an empty file to an untracked file. " +
    "Prints `{ kind: text|binary|unchanged|unsupported, path, area, oldMode?, newMode?, patch? }` (a text diff carries its complete patch), or null outside a repository.",
  examples: ["<%= config.bin %> git diff SESSION_ID src/index.ts", "<%= config.bin %> git diff SESSION_ID src/index.ts --area staged"],
  args: { sessionId: sessionIdArg, path: arg.string({ name: "PATH", description: "The file, relative to the workdir.", required: true }) },
  flags: {
    area: flag.string({ description: "Which comparison.", options: ["staged", "worktree", "untracked"], default: "worktree" }),
    base64: base64Flag,
  },
  call: ({ client, server }, { args, flags }) =>
    sdk.gitDiff({
      client,
      path: { server, sessionId: args.sessionId },
      query: { area: flags.area as "staged" | "worktree" | "untracked", path: workspacePathValue(args.path, flags.base64) },
    }),
  print: (result) => result.diff,
});
