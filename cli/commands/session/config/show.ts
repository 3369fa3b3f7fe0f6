import { sdk, unwrap } from "../../../../clients/index.js";
import { sessionIdArg } from "../../../args.js";
import { ZeCommand } from "../../../base.js";

export default class SessionConfigShow extends ZeCommand {
  static override summary = "Print a Session's versioned permission and approval configuration as JSON.";
  static override args = { sessionId: sessionIdArg };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(SessionConfigShow);
    const connection = await this.connect(flags);
    const result = await unwrap(
      sdk.getSessionConfiguration({ client: connection.client.client, path: { server: connection.server, sessionId: args.sessionId } }),
    );
    this.printJson(result.configuration);
  }
}
