// The ids of the tools every host registers before plugins (the built-in tools, Core's `task`
// and `skill`, and CodeMode's `execute`): plugins cannot reuse them. Kept apart from the tool
// modules so a host can name them without loading the tools (a test pins it to the registry).
export const CORE_TOOL_IDS: readonly string[] = Object.freeze(["read", "write", "edit", "shell", "webfetch", "question", "pause", "task", "skill", "execute"]);
