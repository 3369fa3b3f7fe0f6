import { arg } from "../../spec.js";

export const providerIdArg = arg.string({ name: "PROVIDER", description: "Provider ID, such as openai.", required: true });
