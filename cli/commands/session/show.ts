import { sdk, unwrap } from "../../../clients/index.js";
import { sessionIdArg } from "../../args.js";
import { ZeCommand } from "../../base.js";

export default class SessionShow extends ZeCommand {
  static override summary = "Print one Session as JSON.";
  static override args = { sessionId: sessionIdArg };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(SessionShow);
    const connection = await this.connect(flags);
    const result = await unwrap(
      sdk.getSession({ client: connection.client.client, path: { server: connection.server, sessionId: args.sessionId } }),
    );
    this.printJson(result.session);
  }
}
