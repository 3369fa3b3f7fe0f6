// The Harness HTTP protocol version this build speaks, advertised in every response's
// `Ze-Harness-Version: <protocol>/<release>` header and in `GET /v1/capabilities`. Protocol 2:
// agent ids may be nested (`team/reviewer`, from agents/team/reviewer.md), which protocol 1
// clients cannot decode. Clients compare it with what a server advertises (clients/server-version.ts).
export const HARNESS_PROTOCOL_VERSION = 2;
