import { sdk } from "../../../clients/index.js";
import { sessionIdArg } from "../../args.js";
import { jsonCommand } from "../../json-command.js";
import { formatFlag, gitStatusTable } from "../../format.js";

export default jsonCommand({
  summary: "Print the git status of a Session's workdir as JSON, without running git.",
  description:
    "Prints `{ head: { oid } | null, branch?, staged: [{ path, change }], worktree: [{ path, change }], untracked: [{ path }] }`, or null when the workdir is not in a repository. " +
    "Paths are exact bytes as `{ bytesBase64 }`, with their text as `path` beside them when they are UTF-8; `change` is added, modified, deleted or typeChanged; renames show as a deletion plus an addition. " +
    "The workdir must be the repository root; external filters, sparse checkout and submodules fail with WorkspaceUnsupportedError.",
  examples: ["<%= config.bin %> git status SESSION_ID"],
  args: { sessionId: sessionIdArg },
  flags: { format: formatFlag },
  call: ({ client, server }, { args }) => sdk.gitStatus({ client, path: { server, sessionId: args.sessionId } }),
  print: (result) => result.status,
  table: (result) => gitStatusTable(result.status),
});
