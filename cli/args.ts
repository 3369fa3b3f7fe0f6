// Shared argument definitions.
import { Args } from "@oclif/core";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const sessionIdArg = Args.string({
  name: "SESSION_ID",
  description: "Session id (a UUID).",
  required: true,
  parse: async (value: string) => {
    if (!UUID.test(value)) throw new Error(`${JSON.stringify(value)} is not a Session id (a UUID)`);
    return value.toLowerCase();
  },
});
