// List-changed re-reads of the Worker's MCP catalogs (worker/mcp.ts). A server's
// `notifications/tools/list_changed`, `resources/list_changed` or `prompts/list_changed` — on the
// transport's standalone GET stream or inside a POST's answer stream — marks its catalog stale and
// starts a re-read at once, as Node's McpConnection does. The object is not assumed to stay awake
// for the GET stream: a stale catalog (a notification seen while a read failed or while another
// was running) is read again on the next use — a Turn's lease and the catalog route wait for it —
// so the next model request offers the new Tools.
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CatalogLists } from "../services/mcp/catalog.js";
import type { ResolvedMcpServer } from "../services/mcp/config.js";
import { bounded } from "../services/mcp/limits.js";
import type { WorkerMcpConnected } from "./mcp.js";

interface StaleSlot {
  readonly server: ResolvedMcpServer;
  readonly connected: WorkerMcpConnected | undefined;
  stale: boolean;
}

/**
 * Reads `slot`'s catalog while it is stale and its connection is the one that was read; each read
 * is bounded by the server's `catalogMs`. A failed read leaves the slot stale and the last catalog
 * in place (Node keeps it too and warns); the next use tries again.
 */
export async function rereadCatalog(
  slot: StaleSlot,
  how: { read(client: Client, signal: AbortSignal): Promise<CatalogLists>; revised(connected: WorkerMcpConnected, lists: CatalogLists): void },
): Promise<void> {
  while (slot.stale) {
    const connected = slot.connected;
    if (connected === undefined) return;
    slot.stale = false;
    try {
      const lists = await bounded((signal) => how.read(connected.client, signal), { ms: slot.server.limits.catalogMs, limit: "catalogMs" });
      if (slot.connected?.client !== connected.client) return;
      how.revised(slot.connected, lists);
    } catch {
      if (slot.connected?.client === connected.client) slot.stale = true;
      return;
    }
  }
}
