import { sdk } from "../../../clients/index.js";
import { resolveProjectId } from "../../../clients/project.js";
import { jsonCommand } from "../../json-command.js";
import { flag } from "../../spec.js";

export default jsonCommand({
  summary: "Cancel and delete the server's Sessions (workspace files stay).",
  description:
    "Cancels the running work of the current project's Sessions (the project of the current directory: its git remote, or `global` outside a repository) and deletes them all; their ids stay retired and their workdirs' files stay. --all deletes the Sessions of every project; --project names one. Prints the deleted Session ids as JSON.",
  examples: ["<%= config.bin %> server delete", "<%= config.bin %> server delete --all", "<%= config.bin %> --remote http://127.0.0.1:4317 --server main server delete --all"],
  flags: {
    all: flag.boolean({ description: "Delete the Sessions of every project.", exclusive: ["project"] }),
    project: flag.string({ description: "Delete the Sessions of this project id." }),
  },
  call: ({ client, server }, { flags }) => {
    const projectId = flags.all ? undefined : (flags.project ?? resolveProjectId(process.cwd()));
    return sdk.deleteServer({ client, path: { server }, ...(projectId !== undefined ? { query: { projectId } } : {}) });
  },
  print: (result) => result.deleted,
});
