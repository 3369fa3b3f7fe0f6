// oclif's explicit command table (package.json → oclif.commands): every declaration as an
// oclif Command. Only oclif's path loads it (help, completions' topics, command lines the fast
// parser leaves to oclif); the fast path loads one command through cli/table.ts.
import type { Command } from "@oclif/core";
import { toOclifCommand } from "./oclif.js";
import { commandIds, loadCommand, type CommandId } from "./table.js";

export const commands = Object.fromEntries(
  await Promise.all(commandIds.map(async (id) => [id, toOclifCommand(await loadCommand(id))] as const)),
) as Record<CommandId, Command.Class>;
