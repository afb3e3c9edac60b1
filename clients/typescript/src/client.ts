/**
 * The client: one method per verb of the agent API (the verb in camelCase), each taking the verb's
 * JSON body as one object and answering the verb's JSON answer, both typed from the OpenAPI
 * document (`openapi.ts`).
 *
 * - **Errors** throw the class of their code (`errors.ts`), with the status and the
 *   `X-Request-Id` of the answer. Nothing is swallowed.
 * - **Retries.** Up to `retries` more tries, waiting `backoffMs` doubling to `backoffMaxMs` (and
 *   never less than a `503`'s `Retry-After`) in between:
 *   - a `503 unavailable` is sent again whatever the verb: the server wrote nothing;
 *   - a refused connection is sent again whatever the verb: the request never left;
 *   - a connection lost after the request was sent, a timeout, or a proxy's 502 or 504 may hide a
 *     call that landed, so only a verb safe to repeat ({@link SAFE_VERBS}) is sent again after
 *     one: the reads, `heartbeat` (extending a lease twice is extending it), `set_default_lease`,
 *     `update_schedule`, `pause_schedule` and `resume_schedule` (each sets a state: twice is
 *     once), and `create_for` and `create_batch` when every todo has an `idempotency_key` (a
 *     repeat answers the live todo the first try made). The others are not: a repeated claim
 *     leases a second todo, a repeated report answers `conflict`, a repeated create without a key
 *     makes a second todo. Their `Unavailable` says the outcome is unknown (`outcomeUnknown`).
 * - **Long polls.** `claim_next` with `wait_seconds` (and a report whose `next` has one) waits on
 *   the server: the timeout is stretched to cover the wait.
 * - **The fence.** A claim made with `require_fence` answers a lease token; the client keeps it
 *   (claims, `claim_batch` and a report's `next` alike) and sends it with that todo's heartbeats
 *   and reports unless the caller passes one. It is dropped when the todo is reported, or when a
 *   call made with it finds the lease gone.
 */
import { errorFor, LeaseLost, NotFound, ServerError, STATUS, Unavailable } from "./errors.js";
import { activeTraceparent } from "./tracing.js";
import type { BatchClaim, ClaimNextAnswer, Claimed, Input, Output, Reported, Todo, Verb } from "./types.js";

export interface ClientOptions {
  /** How long one try may take, in ms (a long poll gets its wait on top). Default 40,000. */
  timeoutMs?: number;
  /** How many times a call is sent again (after a 503, or a lost answer of a safe call). Default 5. */
  retries?: number;
  /** The first wait before sending again, in ms, doubling each time. Default 500. */
  backoffMs?: number;
  /** The longest wait of the backoff, in ms (a longer `Retry-After` is still honoured). Default 10,000. */
  backoffMaxMs?: number;
  /** The `fetch` to use (default: the global one), e.g. to count or log requests. */
  fetch?: typeof fetch;
}

export interface CallOptions {
  /** Aborts the call (and its retries); the call then rejects with the signal's reason. */
  signal?: AbortSignal;
  /** The W3C `traceparent` header to send (default: the active span's, with OpenTelemetry). */
  traceparent?: string;
}

/** The calls that may be sent again after a lost answer (see the module's comment). */
export const SAFE_VERBS: ReadonlySet<Verb> = new Set<Verb>([
  "list_todos",
  "get_todo",
  "get_default_lease",
  "list_schedules",
  "heartbeat",
  "set_default_lease",
  "update_schedule",
  "pause_schedule",
  "resume_schedule",
]);

/** Each verb's method on {@link Client}; the compiler checks that every verb has one. */
export const METHODS = {
  create_for: "createFor",
  create_batch: "createBatch",
  list_todos: "listTodos",
  get_todo: "getTodo",
  claim_next: "claimNext",
  claim: "claim",
  heartbeat: "heartbeat",
  complete: "complete",
  fail: "fail",
  release: "release",
  claim_batch: "claimBatch",
  complete_batch: "completeBatch",
  get_default_lease: "getDefaultLease",
  set_default_lease: "setDefaultLease",
  list_schedules: "listSchedules",
  create_schedule: "createSchedule",
  update_schedule: "updateSchedule",
  fire_schedule: "fireSchedule",
  pause_schedule: "pauseSchedule",
  resume_schedule: "resumeSchedule",
  delete_schedule: "deleteSchedule",
} as const satisfies Record<Verb, keyof Client>;

/** The seconds a long poll's timeout allows beyond its wait. */
const LONG_POLL_MARGIN_MS = 10_000;
/** Connection errors raised before a byte of the request left: sending again cannot repeat a call. */
const NOT_SENT = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "UND_ERR_CONNECT_TIMEOUT",
]);
/** A note for a report refused after a 503 was retried: the database may have committed the first try. */
const AFTER_503 =
  " (an earlier try was answered 503 unavailable; if the database committed that try just before " +
  "its connection was cut, the report had landed)";

/** What a fenced verb's body may carry: the todo's id and, optionally, its lease token. */
interface Fenced {
  id: string;
  lease_token?: string | null;
}

/** `Client("http://127.0.0.1:8000", token)`: the agent API of one Board, as one endpoint. */
export class Client {
  readonly url: string;
  readonly timeoutMs: number;
  readonly retries: number;
  readonly backoffMs: number;
  readonly backoffMaxMs: number;
  readonly #token: string;
  readonly #fetch: typeof fetch;
  /** The lease tokens of the fenced claims this client holds, by todo id. */
  readonly #tokens = new Map<string, string>();

  constructor(url: string, token: string, options: ClientOptions = {}) {
    if (typeof url !== "string" || !/^https?:\/\//.test(url)) {
      throw new TypeError(`Client: url must be an http:// or https:// URL, got ${JSON.stringify(url)}`);
    }
    if (typeof token !== "string" || !/^[\x21-\x7e]+$/.test(token)) {
      throw new TypeError("Client: the token must be printable ASCII without spaces (as Board vends it)");
    }
    this.url = url.replace(/\/+$/, "") + "/api/v1/";
    this.#token = token;
    this.timeoutMs = positive("timeoutMs", options.timeoutMs ?? 40_000);
    this.retries = count("retries", options.retries ?? 5);
    this.backoffMs = positive("backoffMs", options.backoffMs ?? 500);
    this.backoffMaxMs = positive("backoffMaxMs", options.backoffMaxMs ?? 10_000);
    const given = options.fetch ?? globalThis.fetch;
    if (typeof given !== "function") {
      throw new TypeError("Client: no fetch: pass options.fetch, or run on Node.js 18 or later");
    }
    this.#fetch = given;
  }

  // --- the transport -------------------------------------------------------------------------

  /**
   * POST one verb; its answer, or the error's exception. `safe` overrides whether a lost answer
   * may be sent again (default: {@link SAFE_VERBS}); `waitSeconds` is how long the server may hold
   * the call (a long poll: default, the body's `wait_seconds` or its `next`'s).
   */
  async call<V extends Verb>(
    verb: V,
    body: Input<V>,
    options: CallOptions & { safe?: boolean; waitSeconds?: number | null } = {},
  ): Promise<Output<V>> {
    const repeatable = options.safe ?? SAFE_VERBS.has(verb);
    const wait = options.waitSeconds ?? waitOf(body);
    const timeoutMs = wait == null ? this.timeoutMs : Math.max(this.timeoutMs, wait * 1000 + LONG_POLL_MARGIN_MS);
    const text = JSON.stringify(body);
    const traceparent = options.traceparent ?? (await activeTraceparent());
    let delay = this.backoffMs;
    let maybeLanded = false;
    let answered503 = false;
    for (let attempt = 0; ; attempt++) {
      const last = attempt >= this.retries;
      let answer: Answer;
      try {
        answer = await this.#post(verb, text, timeoutMs, options.signal, traceparent);
      } catch (error) {
        if (options.signal?.aborted) {
          throw options.signal.reason;
        }
        const sent = !notSent(error);
        maybeLanded ||= sent;
        if (last || (sent && !repeatable)) {
          throw new Unavailable(noAnswer(verb, error, sent, repeatable, attempt + 1, maybeLanded), {
            status: 0,
            outcomeUnknown: maybeLanded,
            cause: error,
          });
        }
        await sleep(delay, options.signal);
        delay = Math.min(delay * 2, this.backoffMaxMs);
        continue;
      }
      if (answer.status < 400) {
        return parseSuccess(verb, answer) as Output<V>;
      }
      let error = errorFor(verb, answer.status, parseJSON(answer.text), answer.requestId, answer.retryAfter);
      if (error instanceof Unavailable && (answer.status === 502 || answer.status === 504)) {
        maybeLanded = true; // a proxy's: the server may have run the call
        error.outcomeUnknown = true;
        if (last || !repeatable) {
          throw error;
        }
      } else if (error instanceof Unavailable && answer.status === 503) {
        answered503 = true;
        error.outcomeUnknown = maybeLanded;
        if (last) {
          throw error;
        }
      } else {
        if (answered503 && error instanceof LeaseLost) {
          error = new LeaseLost(error.message + AFTER_503, { status: error.status, requestId: error.requestId });
        }
        throw error;
      }
      await sleep(Math.max(delay, (error.retryAfter ?? 0) * 1000), options.signal);
      delay = Math.min(delay * 2, this.backoffMaxMs);
    }
  }

  /** One request, body read included, within `timeoutMs`. Throws on no (complete) answer. */
  async #post(
    verb: string,
    body: string,
    timeoutMs: number,
    signal: AbortSignal | undefined,
    traceparent: string | undefined,
  ): Promise<Answer> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    const forward = () => controller.abort(signal?.reason);
    signal?.addEventListener("abort", forward, { once: true });
    try {
      if (signal?.aborted) {
        throw signal.reason;
      }
      const response = await this.#fetch(this.url + verb, {
        method: "POST",
        headers: {
          Authorization: `Bearer ${this.#token}`,
          "Content-Type": "application/json",
          ...(traceparent === undefined ? {} : { traceparent }),
        },
        body,
        signal: controller.signal,
      });
      return {
        status: response.status,
        text: await response.text(),
        requestId: response.headers.get("X-Request-Id"),
        retryAfter: seconds(response.headers.get("Retry-After")),
      };
    } catch (error) {
      // An abort by the timer surfaces as an AbortError: say why instead.
      throw controller.signal.aborted && !signal?.aborted ? controller.signal.reason : error;
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener("abort", forward);
    }
  }

  // --- the fence -----------------------------------------------------------------------------

  /** The lease token this client keeps for a todo (from a fenced claim), if any. */
  leaseToken(todoId: string): string | undefined {
    return this.#tokens.get(todoId);
  }

  /**
   * Keep a claim's lease token, or forget an older one for the same todo (an unfenced claim has
   * none, and a stale token would fence it off).
   */
  #keep(claim: { todo: Todo; lease_token?: string }): void {
    if (claim.lease_token !== undefined) {
      this.#tokens.set(claim.todo.id, claim.lease_token);
    } else {
      this.#tokens.delete(claim.todo.id);
    }
  }

  /** `input` with the kept lease token when the caller gave none. */
  #fenced<T extends Fenced>(input: T): T {
    requireId(input);
    if (input.lease_token != null) {
      return input;
    }
    const kept = this.#tokens.get(input.id);
    return kept === undefined ? input : { ...input, lease_token: kept };
  }

  /**
   * Call a verb on a held todo (with the kept token unless the caller gave one), forgetting the
   * kept token when the lease turns out gone.
   */
  async #onLease<V extends "heartbeat" | "complete" | "fail" | "release">(
    verb: V,
    input: Input<V>,
    options: CallOptions,
  ): Promise<Output<V>> {
    try {
      return await this.call(verb, this.#fenced(input), options);
    } catch (error) {
      if ((error instanceof LeaseLost || error instanceof NotFound) && input.lease_token == null) {
        this.#tokens.delete(input.id);
      }
      throw error;
    }
  }

  // --- creating ------------------------------------------------------------------------------

  /**
   * Enqueue a todo (`created` false: a live todo already held `idempotency_key`). Sent again after
   * a lost answer only when it has an `idempotency_key`.
   */
  createFor(input: Input<"create_for">, options: CallOptions = {}): Promise<Output<"create_for">> {
    return this.call("create_for", input, { ...options, safe: hasKey(input) });
  }

  /**
   * Enqueue up to 1,000 todos in one call (each item: `createFor`'s fields). A bad item throws
   * `Invalid` naming `items[i].field` and nothing is written. Sent again after a lost answer only
   * when every item has an `idempotency_key`.
   */
  createBatch(input: Input<"create_batch">, options: CallOptions = {}): Promise<Output<"create_batch">> {
    const safe = Array.isArray(input?.items) && input.items.length > 0 && input.items.every(hasKey);
    return this.call("create_batch", input, { ...options, safe });
  }

  // --- reading -------------------------------------------------------------------------------

  /** This endpoint's todos, newest first; pass `next_cursor` back as `cursor`. */
  listTodos(input: Input<"list_todos"> = {}, options: CallOptions = {}): Promise<Output<"list_todos">> {
    return this.call("list_todos", input, options);
  }

  /** One todo with its result and attempts (summaries are data, not instructions). */
  getTodo(input: Input<"get_todo">, options: CallOptions = {}): Promise<Output<"get_todo">> {
    return this.call("get_todo", input, options);
  }

  // --- claiming ------------------------------------------------------------------------------

  /**
   * The next claimable todo, or `{empty: true}`; `wait_seconds` long-polls. Not sent again after a
   * lost answer (it may have claimed: that lease lapses and the work comes back).
   */
  async claimNext(input: Input<"claim_next"> = {}, options: CallOptions = {}): Promise<ClaimNextAnswer> {
    const answer = await this.call("claim_next", input, options);
    if (!answer.empty) {
      this.#keep(answer);
    }
    return answer;
  }

  /** Lease one todo by id. */
  async claim(input: Input<"claim">, options: CallOptions = {}): Promise<Output<"claim">> {
    const answer = await this.call("claim", input, options);
    this.#keep(answer);
    return answer;
  }

  /** Lease up to `max` (1..100) todos at once. */
  async claimBatch(input: Input<"claim_batch">, options: CallOptions = {}): Promise<Output<"claim_batch">> {
    const answer = await this.call("claim_batch", input, options);
    answer.todos.forEach((claim: BatchClaim) => this.#keep(claim));
    return answer;
  }

  // --- reporting -----------------------------------------------------------------------------

  /** Extend the lease of a todo this endpoint holds (`LeaseLost` when it is gone). */
  heartbeat(input: Input<"heartbeat">, options: CallOptions = {}): Promise<Output<"heartbeat">> {
    return this.#onLease("heartbeat", input, options);
  }

  /**
   * Finish a held todo. `next` (claim_next's arguments, `{}` for its defaults) claims the next todo
   * in the same round trip: see {@link Client.nextOf}. Not sent again after a lost answer.
   */
  complete(input: Input<"complete">, options: CallOptions = {}): Promise<Reported> {
    return this.#report("complete", input, options);
  }

  /** Report a failure: retried after a backoff, or dead-lettered once attempts are spent. */
  fail(input: Input<"fail">, options: CallOptions = {}): Promise<Reported> {
    return this.#report("fail", input, options);
  }

  async #report(verb: "complete" | "fail", input: Input<"complete">, options: CallOptions): Promise<Reported> {
    const answer = await this.#onLease(verb, input, options);
    this.#tokens.delete(input.id);
    const following = answer.next;
    if (following && "todo" in following) {
      this.#keep(following);
    }
    return answer;
  }

  /** Give a lease back: the todo is pending again. */
  async release(input: Input<"release">, options: CallOptions = {}): Promise<Output<"release">> {
    const answer = await this.#onLease("release", input, options);
    this.#tokens.delete(input.id);
    return answer;
  }

  /** Complete up to 100 held todos; each item succeeds or fails on its own. */
  async completeBatch(input: Input<"complete_batch">, options: CallOptions = {}): Promise<Output<"complete_batch">> {
    const items = Array.isArray(input?.items) ? input.items.map((item) => this.#fenced(item)) : input?.items;
    const explicit = new Set((input?.items ?? []).filter((item) => item?.lease_token != null).map((item) => item.id));
    const answer = await this.call("complete_batch", { ...input, items }, options);
    for (const result of answer.results) {
      if (result.ok || !explicit.has(result.id)) {
        this.#tokens.delete(result.id); // reported, or the kept token's lease is gone
      }
    }
    return answer;
  }

  /**
   * The claim a report's `next` made, or null when there was no work; throws the error it met
   * (the report itself had landed).
   */
  static nextOf(reported: Reported): Claimed | null {
    const following = reported.next;
    if (following == null || ("empty" in following && following.empty)) {
      return null;
    }
    if ("error" in following) {
      const code: string = following.error.code;
      throw errorFor("claim_next", Object.hasOwn(STATUS, code) ? STATUS[code as keyof typeof STATUS] : 0, following);
    }
    return following;
  }

  /** The claim `claim_next` made, or null when it answered empty. */
  static claimed(answer: ClaimNextAnswer): Claimed | null {
    return answer.empty ? null : answer;
  }

  // --- the endpoint's lease --------------------------------------------------------------------

  /** This endpoint's default lease and the server's limits. */
  getDefaultLease(
    input: Input<"get_default_lease"> = {},
    options: CallOptions = {},
  ): Promise<Output<"get_default_lease">> {
    return this.call("get_default_lease", input, options);
  }

  /** Set this endpoint's default lease in seconds (null: the server's default). */
  setDefaultLease(input: Input<"set_default_lease">, options: CallOptions = {}): Promise<Output<"set_default_lease">> {
    return this.call("set_default_lease", input, options);
  }

  // --- schedules -----------------------------------------------------------------------------

  /** This endpoint's schedules, by name; pass `next_cursor` back as `cursor`. */
  listSchedules(input: Input<"list_schedules"> = {}, options: CallOptions = {}): Promise<Output<"list_schedules">> {
    return this.call("list_schedules", input, options);
  }

  /** A schedule that creates a todo at every time of `cron` in `timezone`. */
  createSchedule(input: Input<"create_schedule">, options: CallOptions = {}): Promise<Output<"create_schedule">> {
    return this.call("create_schedule", input, options);
  }

  /** Replace a schedule's definition (every field; those left out take their defaults). */
  updateSchedule(input: Input<"update_schedule">, options: CallOptions = {}): Promise<Output<"update_schedule">> {
    return this.call("update_schedule", input, options);
  }

  /** Create the schedule's todo now: `{schedule, todo_id}`. */
  fireSchedule(input: Input<"fire_schedule">, options: CallOptions = {}): Promise<Output<"fire_schedule">> {
    return this.call("fire_schedule", input, options);
  }

  pauseSchedule(input: Input<"pause_schedule">, options: CallOptions = {}): Promise<Output<"pause_schedule">> {
    return this.call("pause_schedule", input, options);
  }

  resumeSchedule(input: Input<"resume_schedule">, options: CallOptions = {}): Promise<Output<"resume_schedule">> {
    return this.call("resume_schedule", input, options);
  }

  /** `{id, name, deleted}`. */
  deleteSchedule(input: Input<"delete_schedule">, options: CallOptions = {}): Promise<Output<"delete_schedule">> {
    return this.call("delete_schedule", input, options);
  }
}

/** One HTTP answer, read whole. */
interface Answer {
  status: number;
  text: string;
  requestId: string | null;
  retryAfter: number | null;
}

function parseJSON(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

function parseSuccess(verb: string, answer: Answer): unknown {
  const body = parseJSON(answer.text);
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new ServerError(`${verb}: HTTP ${answer.status} whose body is not a JSON object`, {
      status: answer.status,
      requestId: answer.requestId,
    });
  }
  return body;
}

/** A `Retry-After` in seconds (the HTTP-date form is not used by Board: null). */
function seconds(value: string | null): number | null {
  if (value === null || value.trim() === "") {
    return null;
  }
  const parsed = Number(value);
  return Number.isFinite(parsed) && parsed >= 0 ? parsed : null;
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const cause = error.cause instanceof Error ? `: ${error.cause.message}` : "";
    return `${error.name}: ${error.message}${cause}`;
  }
  return String(error);
}

/** Whether fetch failed before the request left (the connection was never made). */
function notSent(error: unknown): boolean {
  const cause = error instanceof Error ? error.cause : undefined;
  const code = typeof cause === "object" && cause !== null && "code" in cause ? cause.code : undefined;
  return typeof code === "string" && NOT_SENT.has(code);
}

/** What an `Unavailable` for a connection failure says. */
function noAnswer(verb: string, error: unknown, sent: boolean, repeatable: boolean, tries: number, unknown: boolean) {
  const what = `${verb}: no answer from the server (${describe(error)})`;
  if (sent && !repeatable) {
    return `${what}; the call may or may not have landed (not sent again: ${verb} is not safe to repeat)`;
  }
  const landed = unknown ? "the call may or may not have landed" : "the request was never sent";
  return `${what}; gave up after ${tries} ${tries === 1 ? "try" : "tries"}, ${landed}`;
}

/** The seconds the server may hold a call: a claim's `wait_seconds`, or a report's `next`'s. */
function waitOf(body: unknown): number | null {
  if (typeof body !== "object" || body === null) {
    return null;
  }
  const record = body as { wait_seconds?: unknown; next?: unknown };
  if (typeof record.wait_seconds === "number") {
    return record.wait_seconds;
  }
  return record.next === undefined ? null : waitOf(record.next);
}

function hasKey(item: { idempotency_key?: string | null }): boolean {
  return typeof item?.idempotency_key === "string" && item.idempotency_key !== "";
}

function requireId(input: Fenced): void {
  if (typeof input?.id !== "string") {
    throw new TypeError(`the todo's id must be a string, got ${JSON.stringify(input?.id)}`);
  }
}

function positive(name: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0) {
    throw new TypeError(`Client: ${name} must be a positive number, got ${value}`);
  }
  return value;
}

function count(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 0) {
    throw new TypeError(`Client: ${name} must be a whole number of at least 0, got ${value}`);
  }
  return value;
}

/** Wait `ms`, or reject with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const done = () => {
      signal?.removeEventListener("abort", abort);
      resolve();
    };
    const abort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", abort, { once: true });
  });
}
