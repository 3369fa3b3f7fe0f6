// Shared pieces of Turn recording (services/core/rewind): content digests, the largest file
// whose content is recorded, and the stat-only scan's entry shape (stat-scan.ts).
import { createHash } from "node:crypto";

export { MAX_SNAPSHOT_FILES, SnapshotTooLarge, entryOf, modeOf, sameStat, statScan, ListingCache, type SnapshotEntry } from "./stat-scan.js";

/** Files larger than this are seen by the scan but their content is never recorded. */
export const MAX_SNAPSHOT_FILE_BYTES = 4 * 1024 * 1024;

export const sha256Hex = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("hex");
