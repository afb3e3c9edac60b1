/**
 * Board's agent API from TypeScript: `Client` (one method per verb), the errors by code, and
 * `Worker` to drain queues with handlers. No runtime dependency beyond `fetch`.
 */
export { Client, METHODS, SAFE_VERBS } from "./client.js";
export type { CallOptions, ClientOptions } from "./client.js";
export {
  BoardError,
  BY_CODE,
  Conflict,
  errorFor,
  Forbidden,
  Invalid,
  LeaseLost,
  MethodNotAllowed,
  NotFound,
  Paused,
  ServerError,
  TooLarge,
  Unauthorized,
  Unavailable,
} from "./errors.js";
export type { ErrorCode, ErrorDetails } from "./errors.js";
export { Done, errorOf, Fail, Release, Worker } from "./worker.js";
export type { Handler, JobContext, Outcome, WorkerOptions } from "./worker.js";
export type * from "./types.js";
export type { components, operations, paths } from "./openapi.js";
