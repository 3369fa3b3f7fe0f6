import { sdk } from "../../../clients/index.js";
import { readJsonArgument, sessionIdArg } from "../../args.js";
import { idArg } from "../../short-ids.js";
import { usageError } from "../../errors.js";
import { jsonCommand } from "../../json-command.js";
import { arg } from "../../spec.js";

export default jsonCommand({
  summary: "Answer a pending question request; print the reply and its Turn as JSON.",
  description:
    'ANSWERS is a JSON array with one answer per question, in order; each answer is an array of the selected option labels (or your own text where the question allows it): `[["Yes"],["red","blue"]]`. Pass - to read it from stdin.',
  examples: [`<%= config.bin %> question reply SESSION_ID REQUEST_ID '[["Yes"]]'`],
  args: {
    sessionId: sessionIdArg,
    requestId: idArg("question", "REQUEST_ID", "The question request."),
    answers: arg.string({ name: "ANSWERS", description: "Answers as JSON string[][], or - for stdin.", required: true }),
  },
  input: async ({ args }) => {
    const answers = await readJsonArgument(args.answers, "ANSWERS");
    const valid = Array.isArray(answers) && answers.length > 0 && answers.every((answer) => Array.isArray(answer) && answer.every((item) => typeof item === "string"));
    if (!valid) throw usageError('ANSWERS must be a non-empty JSON array of string arrays, e.g. [["Yes"]]');
    return answers as string[][];
  },
  call: ({ client, server }, { args }, answers) =>
    sdk.replyQuestion({ client, path: { server, sessionId: args.sessionId, questionRequestId: args.requestId }, body: { answers } }),
});
