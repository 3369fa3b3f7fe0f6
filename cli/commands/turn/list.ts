import { Flags } from "@oclif/core";
import { sdk, unwrap } from "../../../clients/index.js";
import { sessionIdArg } from "../../args.js";
import { ZeCommand } from "../../base.js";

export default class TurnList extends ZeCommand {
  static override summary = "Print a page of a Session's Turns, oldest first, as JSON.";
  static override description =
    "Prints `{ sessionId, boundary, turns: [{ activityCursor, workSequence, turn }], nextAfterSequence? }`. Pass nextAfterSequence as --after for the next page.";
  static override args = { sessionId: sessionIdArg };
  static override flags = {
    limit: Flags.integer({ description: "Turns per page.", min: 1 }),
    after: Flags.integer({ description: "Start after this Turn sequence.", min: 0 }),
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(TurnList);
    const connection = await this.connect(flags);
    const query = {
      ...(flags.limit !== undefined ? { limit: String(flags.limit) } : {}),
      ...(flags.after !== undefined ? { afterSequence: String(flags.after) } : {}),
    };
    const result = await unwrap(
      sdk.listSessionTurns({ client: connection.client.client, path: { server: connection.server, sessionId: args.sessionId }, query }),
    );
    this.printJson(result);
  }
}
