import { sdk, unwrap } from "../../../clients/index.js";
import { sessionIdArg } from "../../args.js";
import { ZeCommand } from "../../base.js";

export default class SessionChildren extends ZeCommand {
  static override summary = "List the Sessions spawned directly from a Session, oldest first, as JSON.";
  static override args = { sessionId: sessionIdArg };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(SessionChildren);
    const connection = await this.connect(flags);
    const result = await unwrap(
      sdk.listSessionChildren({ client: connection.client.client, path: { server: connection.server, sessionId: args.sessionId } }),
    );
    this.printJson(result.sessions);
  }
}
