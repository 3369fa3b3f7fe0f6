// The status row: what the TUI is waiting for (approval, an answer, a running Turn,
// reconnecting), the pending leader key, and the keys that matter now.
import { Text } from "ink";

export interface StatusRowProps {
  readonly state: "idle" | "working" | "approval" | "question" | "reconnecting";
  readonly spinner: string;
  readonly leader: boolean;
  readonly queued: number;
}

const LEADER_KEYS = "Ctrl+X then: M model · A agent · K skills · E effort · S sessions · N new · O open · F fork · G sub-agents · C compact · T details · J/D/L Execute trace · P provider · V paste · R remove image · Q quit";

export function StatusRow({ state, spinner, leader, queued }: StatusRowProps) {
  if (leader) return <Text color="yellow">{LEADER_KEYS}</Text>;
  const more = queued > 0 ? ` · ${queued} queued` : "";
  switch (state) {
    case "approval":
      return <Text color="yellow">Approval required · ←/→ choose · Enter reply · Esc reject</Text>;
    case "question":
      return <Text color="yellow">Response required · ↑/↓ choose · Enter answer · Esc dismiss</Text>;
    case "reconnecting":
      return <Text color="red">Reconnecting…</Text>;
    case "working":
      return (
        <Text dimColor>
          <Text color="yellow">{spinner}</Text> working{more} · Esc cancel · Enter follow up · Ctrl+C quit
        </Text>
      );
    case "idle":
      return <Text dimColor>Enter send · / commands · Ctrl+X leader · Ctrl+C quit</Text>;
  }
}
