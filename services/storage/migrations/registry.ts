import { migration as sessionsFoundation } from "./20261130114214-sessions-foundation.js";
import { migration as turns } from "./20261130120000-turns.js";
import { migration as turnStampsAndRunners } from "./20261201100000-turn-stamps-and-runners.js";
import { migration as historyRevisions } from "./20261201120000-history-revisions.js";
import { migration as compactionsAndJournal } from "./20261202100000-compactions-and-journal.js";
import { migration as sessionPlugins } from "./20261203100000-session-plugins.js";
import { migration as sessionPluginFlag } from "./20261203110000-session-plugin-flag.js";
import { migration as historyRows } from "./20261204100000-history-rows.js";
import { migration as diagnosticsAndContext } from "./20261204110000-diagnostics-and-context.js";
import { migration as terminals } from "./20261205100000-terminals.js";
import { migration as terminalOrigin } from "./20261206100000-terminal-origin.js";
import { migration as workspacePatches } from "./20261204120000-workspace-patches.js";
import { migration as workspaceRecording } from "./20261207100000-workspace-recording.js";
import { migration as terminalLease } from "./20261208100000-terminal-lease.js";
import { migration as historyIndexTrigger } from "./20261209100000-history-index-trigger.js";
import { migration as turnEmptyPatch } from "./20261210100000-turn-empty-patch.js";
import { migration as turnPreparedRequest } from "./20261210110000-turn-prepared-request.js";
import { migration as spilledValues } from "./20261211100000-spilled-values.js";
import type { MigrationRegistry } from "./types.js";

export type { Migration, MigrationRegistry, MigrationTransaction } from "./types.js";

/**
 * The server database's migrations, in order. To change the schema add
 * `<YYYYMMDDHHMMSS>-<name>.ts` next to this file and append it here (and update `../schema.ts`).
 */
export const serverMigrations: MigrationRegistry = [sessionsFoundation, turns, turnStampsAndRunners, historyRevisions, compactionsAndJournal, sessionPlugins, sessionPluginFlag, historyRows, diagnosticsAndContext, workspacePatches, terminals, terminalOrigin, workspaceRecording, terminalLease, historyIndexTrigger, turnEmptyPatch, turnPreparedRequest, spilledValues];
