// The part of workerd's `cloudflare:workers` module this host uses (the bundler leaves the
// import to workerd; there is no @cloudflare/workers-types dependency). A Durable Object class
// must extend DurableObject for its stub to offer RPC methods.
declare module "cloudflare:workers" {
  export abstract class DurableObject<Env = unknown> {
    protected readonly ctx: unknown;
    protected readonly env: Env;
    constructor(ctx: unknown, env: Env);
  }
}
