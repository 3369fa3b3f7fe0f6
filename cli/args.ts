// Shared argument definitions.
import { Args, Flags } from "@oclif/core";
import { usageError } from "./command.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A Session id in its canonical (lower-case) form; anything else is a usage error. */
async function parseSessionId(value: string): Promise<string> {
  if (!UUID.test(value)) throw usageError(`${JSON.stringify(value)} is not a Session id (a UUID)`);
  return value.toLowerCase();
}

export const sessionIdArg = Args.string({
  name: "SESSION_ID",
  description: "Session id (a UUID).",
  required: true,
  parse: parseSessionId,
});

/** `--session ID` takes the same canonical form as SESSION_ID, so `create --session X` then `show X` agree. */
export const sessionIdFlag = Flags.custom<string>({ parse: parseSessionId });

/** A UUID argument (a request, Turn or saved permission id) in canonical lower-case form. */
export function uuidArg(name: string, description: string) {
  return Args.string({
    name,
    description,
    required: true,
    parse: async (value: string) => {
      if (!UUID.test(value)) throw usageError(`${JSON.stringify(value)} is not a valid ${name} (a UUID)`);
      return value.toLowerCase();
    },
  });
}
