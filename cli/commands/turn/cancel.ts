import { Flags } from "@oclif/core";
import { sdk, unwrap } from "../../../clients/index.js";
import { sessionIdArg, uuidArg } from "../../args.js";
import { ZeCommand } from "../../base.js";

export default class TurnCancel extends ZeCommand {
  static override summary = "Request cancellation of a pending or running Turn; print the Turn as JSON.";
  static override description = "The Turn settles as cancelled when its runner sees the request; watch it (or `turn show`) for the outcome.";
  static override args = { sessionId: sessionIdArg, turnId: uuidArg("TURN_ID", "The Turn id.") };
  static override flags = {
    reason: Flags.string({ description: "Why the Turn is cancelled (kept with the outcome)." }),
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(TurnCancel);
    const connection = await this.connect(flags);
    const result = await unwrap(
      sdk.cancelTurn({
        client: connection.client.client,
        path: { server: connection.server, sessionId: args.sessionId, turnId: args.turnId },
        body: flags.reason !== undefined ? { reason: flags.reason } : {},
      }),
    );
    this.printJson(result.turn);
  }
}
