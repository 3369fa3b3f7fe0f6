import { Flags } from "@oclif/core";
import { sdk, unwrap } from "../../../clients/index.js";
import { resolveProjectId } from "../../../clients/project.js";
import { ZeCommand } from "../../base.js";

export default class SessionList extends ZeCommand {
  static override summary = "List Sessions oldest first as JSON.";
  static override description =
    "Lists the current project's Sessions (the project of the current directory: its git remote, or `global` outside a repository). --all lists every project; --project names one.";
  static override flags = {
    all: Flags.boolean({ description: "List Sessions of every project.", exclusive: ["project"] }),
    project: Flags.string({ description: "List the Sessions of this project id." }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(SessionList);
    const connection = await this.connect(flags);
    const projectId = flags.all ? undefined : (flags.project ?? resolveProjectId(process.cwd()));
    const result = await unwrap(
      sdk.listSessions({
        client: connection.client.client,
        path: { server: connection.server },
        ...(projectId !== undefined ? { query: { projectId } } : {}),
      }),
    );
    this.printJson(result.sessions);
  }
}
