// The shape most commands share: parse, check the input, connect, make one API call through
// the generated client, print (part of) its result as JSON.
import type { Client } from "../generated/client/client/index.js";
import { unwrap } from "../clients/index.js";
import type { Connection } from "./base.js";
import { defineCommand, type ArgSpecs, type CommandSpec, type ConnectionValues, type Context, type FlagSpecs, type Values } from "./spec.js";

/** What a call needs: the generated client, the server name to address, the connection. */
export interface Api {
  readonly client: Client;
  readonly server: string;
  readonly connection: Connection;
}

type CommandContext<A, F> = Context<Values<A>, Values<F> & ConnectionValues>;

export interface JsonCommandSpec<A extends ArgSpecs, F extends FlagSpecs, I, D> extends Omit<CommandSpec<A, F>, "run" | "connection"> {
  /** Checks and reads the input before anything is opened (usage errors come first). */
  readonly input?: (context: CommandContext<A, F>) => I | Promise<I>;
  readonly call: (api: Api, context: CommandContext<A, F>, input: I) => Promise<{ data?: D; error?: unknown; response?: Response }>;
  /** What to print of the call's data (default: all of it). */
  readonly print?: (data: D) => unknown;
  /** The readable form `--format table` prints (the command declares `format: formatFlag`, cli/format.ts). */
  readonly table?: (data: D) => string;
}

export function jsonCommand<A extends ArgSpecs = {}, F extends FlagSpecs = {}, I = undefined, D = unknown>(spec: JsonCommandSpec<A, F, I, D>): CommandSpec<A, F> {
  const { input, call, print, table, ...declaration } = spec;
  return defineCommand<A, F>({
    ...declaration,
    connection: true,
    async run(context) {
      const value = (await input?.(context)) as I;
      const connection = await context.connect();
      const data = await unwrap(call({ client: connection.client.client, server: connection.server, connection }, context, value));
      if (table && (context.flags as { format?: unknown }).format === "table") process.stdout.write(table(data));
      else context.printJson(print ? print(data) : data);
    },
  });
}
