// The author identity `run` and `chat` send with their prompts: the same one the TUI sends
// (cli/tui/state/author.ts, `author-id` in the state directory), so the TUI on this machine
// shows `you` for them and other machines show one short author id for all three.
import { authorIdentity } from "./tui/state/author.js";
import { stateDirectory } from "./tui/state/preferences.js";

/** `{ authorId }` for a prompt body, or nothing when no identity can be read or made. */
export function authorField(): { readonly authorId?: string } {
  const authorId = authorIdentity(stateDirectory());
  return authorId !== undefined ? { authorId } : {};
}
