import { sdk, unwrap } from "../../../clients/index.js";
import { sessionIdArg, uuidArg } from "../../args.js";
import { ZeCommand } from "../../base.js";

export default class TurnShow extends ZeCommand {
  static override summary = "Print one Turn as JSON.";
  static override args = { sessionId: sessionIdArg, turnId: uuidArg("TURN_ID", "The Turn id.") };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(TurnShow);
    const connection = await this.connect(flags);
    const result = await unwrap(
      sdk.getTurn({ client: connection.client.client, path: { server: connection.server, sessionId: args.sessionId, turnId: args.turnId } }),
    );
    this.printJson(result.turn);
  }
}
