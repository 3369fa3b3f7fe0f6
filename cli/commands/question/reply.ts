import { Args } from "@oclif/core";
import { readFileSync } from "node:fs";
import { sdk, unwrap } from "../../../clients/index.js";
import { sessionIdArg, uuidArg } from "../../args.js";
import { usageError } from "../../command.js";
import { ZeCommand } from "../../base.js";

export default class QuestionReply extends ZeCommand {
  static override summary = "Answer a pending question request; print the reply and its Turn as JSON.";
  static override description =
    'ANSWERS is a JSON array with one answer per question, in order; each answer is an array of the selected option labels (or your own text where the question allows it): `[["Yes"],["red","blue"]]`. Pass - to read it from stdin.';
  static override examples = [`<%= config.bin %> question reply SESSION_ID REQUEST_ID '[["Yes"]]'`];
  static override args = {
    sessionId: sessionIdArg,
    requestId: uuidArg("REQUEST_ID", "The question request id."),
    answers: Args.string({ name: "ANSWERS", description: "Answers as JSON string[][], or - for stdin.", required: true }),
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(QuestionReply);
    const text = args.answers === "-" ? readFileSync(0, "utf8") : args.answers;
    let answers: unknown;
    try {
      answers = JSON.parse(text);
    } catch {
      throw usageError("ANSWERS is not valid JSON");
    }
    const valid = Array.isArray(answers) && answers.length > 0 && answers.every((answer) => Array.isArray(answer) && answer.every((item) => typeof item === "string"));
    if (!valid) throw usageError('ANSWERS must be a non-empty JSON array of string arrays, e.g. [["Yes"]]');
    const connection = await this.connect(flags);
    const result = await unwrap(
      sdk.replyQuestion({
        client: connection.client.client,
        path: { server: connection.server, sessionId: args.sessionId, questionRequestId: args.requestId },
        body: { answers: answers as string[][] },
      }),
    );
    this.printJson(result);
  }
}
