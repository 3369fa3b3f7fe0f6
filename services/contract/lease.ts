// The claim lease every host work owner renews (docs/scale.md "The lease rules"): how long a host
// that stopped answering keeps its running Turns and its PTYs before another host sharing the
// database settles them. One default for both owners; a host's `leaseMs` option or
// `ZE_HARNESS_LEASE_MS` (services/host/lease.ts) replaces it for both.
export const DEFAULT_LEASE_MS = 30_000;
