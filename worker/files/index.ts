// The Worker's `/workspace` file store and its file tools (see README.md).
export { WorkspaceFileStore, MAX_WORKSPACE_FILE_BYTES, CHUNK_BYTES, MAX_GLOB_RESULTS, MAX_GREP_MATCHES, decodeUtf8, type StoredEntry, type WorkspaceFileStoreOptions } from "./store.js";
export { SqliteWorkspaceHome, fileHomeProblem, type WorkspaceFileHome, type WorkspaceFileHomeEntry, type WorkspaceFileHomeChild } from "./home.js";
export { workspaceFileTools } from "./tools.js";
export { agentsInstructions, nestedAgentsInstructions, AGENTS_FILE } from "./instructions.js";
export { migrateWorkspaceFiles, filesMigrations, FILES_LEDGER_TABLE, type FilesStorageInput } from "./migrations.js";
export { workspacePath, MAX_NAME_BYTES, MAX_PATH_BYTES } from "./paths.js";
export { workspaceFileRoutes, listStoredFiles, captureStoredFile, MAX_LIST_ENTRIES, LIST_TARGET_BYTES, WATCH_HEARTBEAT_MS, type WorkspaceFileRoutesInput } from "./routes.js";
