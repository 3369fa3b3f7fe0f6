import { sdk } from "../../../clients/index.js";
import { resolveProjectId } from "../../../clients/project.js";
import { jsonCommand } from "../../json-command.js";
import { flag } from "../../spec.js";
import { formatFlag, sessionsTable } from "../../format.js";

export default jsonCommand({
  summary: "List Sessions oldest first as JSON.",
  description:
    "Lists the current project's Sessions (the project of the current directory: its git remote, or `global` outside a repository). --all lists every project; --project names one.",
  flags: {
    all: flag.boolean({ description: "List Sessions of every project.", exclusive: ["project"] }),
    project: flag.string({ description: "List the Sessions of this project id." }),
    format: formatFlag,
  },
  call: ({ client, server }, { flags }) => {
    const projectId = flags.all ? undefined : (flags.project ?? resolveProjectId(process.cwd()));
    return sdk.listSessions({ client, path: { server }, ...(projectId !== undefined ? { query: { projectId } } : {}) });
  },
  print: (result) => result.sessions,
  table: (result) => sessionsTable(result.sessions),
});
