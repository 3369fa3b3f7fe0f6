// The project a directory belongs to, computed where the client runs (its git remote, or
// `global`): `session list` asks for the current project's Sessions by this id. The same
// derivation the server uses for a Session's `projectId` (services/contract/project.ts).
export { GLOBAL_PROJECT, resolveProjectId } from "../services/contract/project.js";
