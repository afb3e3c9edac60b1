/**
 * Names for the shapes of the API, all taken from the generated `openapi.ts` (never written by
 * hand, so a change of the document shows up here when the types are regenerated).
 */
import type { components, operations } from "./openapi.js";

/** Every verb of the agent API: the document's operations, less the document itself. */
export type Verb = Exclude<keyof operations, "openapi">;

/** What a verb takes: its JSON body. */
export type Input<V extends Verb> = NonNullable<operations[V]["requestBody"]>["content"]["application/json"];

/** What a verb answers on success. */
export type Output<V extends Verb> = operations[V]["responses"][200]["content"]["application/json"];

export type Todo = components["schemas"]["TodoRow"];
export type TodoWithResult = components["schemas"]["TodoWithResult"];
export type Attempt = components["schemas"]["Attempt"];
/** Why an attempt failed, as its holder reported it (cut by the server, `truncated` says so). */
export type AttemptError = components["schemas"]["AttemptError"];
/** The error object `complete` and `fail` take: `{type, message, traceback}`, all optional. */
export type ErrorReport = NonNullable<components["schemas"]["ErrorReport"]>;
export type Lease = components["schemas"]["Lease"];
export type Schedule = components["schemas"]["Schedule"];
export type ErrorEnvelope = components["schemas"]["Error"];

/** `claim_next`'s answer: `{empty: true}`, or a claimed todo. */
export type ClaimNextAnswer = Output<"claim_next">;
/** A claim that took a todo (from `claim_next`, or a report's `next`). */
export type Claimed = Extract<ClaimNextAnswer, { empty: false }>;
/** `claim`'s answer. */
export type Claim = components["schemas"]["Claim"];
/** One todo of `claim_batch`'s answer. */
export type BatchClaim = Output<"claim_batch">["todos"][number];

/** `complete`'s and `fail`'s answer: the todo, and with `next` what the claim that followed answered. */
export type Reported = Output<"complete">;
/** `claim_next`'s arguments, as a report's `next` takes them. */
export type ClaimArgs = NonNullable<Input<"complete">["next"]>;

export type CreateItem = Input<"create_batch">["items"][number];
export type CreateResult = Output<"create_batch">["results"][number];
export type CompleteItem = Input<"complete_batch">["items"][number];
export type CompleteResult = Output<"complete_batch">["results"][number];
