/**
 * `@studio/gateway/tooling`: the gateway's parts the benches drive on their own (docs/design/workspaces.md): the held
 * answer the pipeline bench feeds its cache with, and the HTTP/1.1 pool the bare proxy measures the hop with.
 */
export { HeldAnswer } from './answer';
export { Pool } from './forward/http1';
