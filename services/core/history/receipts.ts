// `forkReceipt`: the published fork of a caller-selected identity, found without sending the
// fork again (its source may be gone by then). Null means no such fork is published now.
import type { ForkReceiptResponse } from "../../../generated/client/types.gen.js";
import { getSessionById, type StorageHandle } from "../../storage/index.js";
import { toSession } from "../sessions.js";

export class ForkReceipts {
  constructor(private readonly storage: StorageHandle) {}

  async get(server: string, sessionId: string, forkedSessionId: string): Promise<ForkReceiptResponse> {
    const row = await getSessionById(this.storage, forkedSessionId);
    if (!row || row.server !== server) return { receipt: null };
    const session = toSession(row);
    if (session.forkedFrom?.parentSessionId !== sessionId) return { receipt: null };
    return { receipt: { sourceSessionId: sessionId, forkedSessionId, session } };
  }
}
