import { Args } from "@oclif/core";
import { sdk, unwrap } from "../../../clients/index.js";
import { sessionIdArg } from "../../args.js";
import { ZeCommand } from "../../base.js";

export default class SessionTitle extends ZeCommand {
  static override summary = "Set a Session's title (at most 100 characters) and print the Session.";
  static override args = {
    sessionId: sessionIdArg,
    title: Args.string({ description: "The new title.", required: true }),
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(SessionTitle);
    const connection = await this.connect(flags);
    const result = await unwrap(
      sdk.setSessionTitle({
        client: connection.client.client,
        path: { server: connection.server, sessionId: args.sessionId },
        body: { title: args.title },
      }),
    );
    this.printJson(result.session);
  }
}
