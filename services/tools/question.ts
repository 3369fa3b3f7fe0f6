// `question`: asks the user one or more multiple-choice questions through `ctx.askQuestion` and
// returns the answers. The input is the contract's `Question` list (limits from the reference:
// question 1–4096 chars, header 1–30, at least one option, label 1–256, description ≤ 4096).
// A dismissal (or a reply with the wrong number of answers) fails with `question_dismissed`
// and the message `The user dismissed this question.` Direct-only: never inside CodeMode.
import type { Question } from "../../generated/client/types.gen.js";
import { ToolFailure, defaultProjection, isQuestionDismissedError, textResult, throwIfAborted, type ToolDefinition } from "./tool.js";

export interface QuestionInput {
  readonly questions: Question[];
}

const dismissed = () => new ToolFailure("question_dismissed", "The user dismissed this question.");

export const questionTool: ToolDefinition<QuestionInput> = {
  id: "question",
  description:
    "Ask the user one or more questions, each with options to choose from (and, unless custom is false, a typed " +
    "answer). Returns the user's answers in order. Use it when you need a decision only the user can make.",
  directOnly: true,
  inputSchema: {
    type: "object",
    properties: {
      questions: {
        type: "array",
        minItems: 1,
        items: {
          type: "object",
          properties: {
            question: { type: "string", minLength: 1, maxLength: 4096, description: "The full question." },
            header: { type: "string", minLength: 1, maxLength: 30, description: "A short title." },
            options: {
              type: "array",
              minItems: 1,
              items: {
                type: "object",
                properties: {
                  label: { type: "string", minLength: 1, maxLength: 256 },
                  description: { type: "string", maxLength: 4096 },
                },
                required: ["label", "description"],
                additionalProperties: false,
              },
            },
            multiple: { type: "boolean", description: "Allow selecting several options." },
            custom: { type: "boolean", description: "Allow a typed answer (default true)." },
          },
          required: ["question", "header", "options"],
          additionalProperties: false,
        },
      },
    },
    required: ["questions"],
    additionalProperties: false,
  },
  permissions() {
    return defaultProjection("question");
  },
  async execute(input, ctx) {
    throwIfAborted(ctx.signal);
    let answers: string[][];
    try {
      answers = await ctx.askQuestion(input.questions);
    } catch (error) {
      if (isQuestionDismissedError(error)) throw dismissed();
      throw error;
    }
    if (answers.length !== input.questions.length) throw dismissed();
    const lines = ["The user answered:"];
    input.questions.forEach((q, i) => {
      lines.push(`${i + 1}. [${q.header}] ${q.question}`, `   → ${(answers[i] ?? []).join(", ")}`);
    });
    return textResult(lines.join("\n"));
  },
};
