// `skill`: load a Skill's instructions into the conversation when the model decides it needs
// them. The Turn lists the Skills it offers in a developer instruction (safe metadata only:
// id, name and description); the body and its supporting-file manifest come back as the result.
// Loading is Core's (`ctx.skills`); this file only validates and shapes the call.
import { ToolFailure, textResult, throwIfAborted, type ToolDefinition } from "./tool.js";

export interface SkillInput {
  /** The Skill's name, as the description lists it. */
  readonly name: string;
}

const DESCRIPTION =
  "Load a Skill: specialized instructions (and the files that come with them) for a kind of task. " +
  "Call it with a Skill's exact name when a task matches one of the available Skills, before you start the task.";

export const skillTool: ToolDefinition<SkillInput> = {
  id: "skill",
  description: DESCRIPTION,
  directOnly: true,
  inputSchema: {
    type: "object",
    properties: { name: { type: "string", minLength: 1, maxLength: 256, description: "The name of the Skill to load." } },
    required: ["name"],
    additionalProperties: false,
  },
  permissions(input) {
    return [{ action: "skill", resources: [input.name], save: [input.name] }];
  },
  async execute(input, ctx) {
    throwIfAborted(ctx.signal);
    const text = await ctx.skills?.load(input.name);
    if (text === undefined) throw new ToolFailure("unknown_skill", `There is no Skill named ${JSON.stringify(input.name)}.`);
    return textResult(text);
  },
};
