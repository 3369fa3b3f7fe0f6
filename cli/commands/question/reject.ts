import { sdk, unwrap } from "../../../clients/index.js";
import { sessionIdArg, uuidArg } from "../../args.js";
import { ZeCommand } from "../../base.js";

export default class QuestionReject extends ZeCommand {
  static override summary = "Dismiss a pending question request (the asking tool fails); print the result and its Turn as JSON.";
  static override args = { sessionId: sessionIdArg, requestId: uuidArg("REQUEST_ID", "The question request id.") };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(QuestionReject);
    const connection = await this.connect(flags);
    const result = await unwrap(
      sdk.rejectQuestion({
        client: connection.client.client,
        path: { server: connection.server, sessionId: args.sessionId, questionRequestId: args.requestId },
      }),
    );
    this.printJson(result);
  }
}
