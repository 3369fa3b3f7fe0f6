import { Flags } from "@oclif/core";
import { sdk, unwrap } from "../../../clients/index.js";
import { sessionIdArg } from "../../args.js";
import { ZeCommand } from "../../base.js";

export default class SessionDelete extends ZeCommand {
  static override summary = "Delete a Session (cancels its work; the id stays retired).";
  static override args = { sessionId: sessionIdArg };
  static override flags = {
    reason: Flags.string({ description: "Why the Session is deleted." }),
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(SessionDelete);
    const connection = await this.connect(flags);
    const result = await unwrap(
      sdk.deleteSession({
        client: connection.client.client,
        path: { server: connection.server, sessionId: args.sessionId },
        body: flags.reason !== undefined ? { reason: flags.reason } : null,
      }),
    );
    this.printJson(result.deleted);
  }
}
