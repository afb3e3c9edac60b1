/**
 * `Worker`: drain queues with handlers, one round trip per job.
 *
 *     const worker = new Worker(new Client(url, token), { concurrency: 2 });
 *     worker.handle("builds", async (todo, ctx) => `built ${todo.title}`);
 *     await worker.run();                // until worker.stop()
 *
 * A handler gets the todo and a {@link JobContext}, and answers how the todo ends:
 *
 * - it **returns**: the todo is completed. A string is the attempt's summary (its last 2048
 *   bytes), `undefined` or `null` nothing, a {@link Done} a summary, result and artifact together,
 *   anything else the JSON `result`;
 * - it **throws** {@link Release}: the lease is given back (the todo is pending again, no attempt
 *   spent on a failure);
 * - it **throws** {@link Fail}: the todo is failed with its summary, result and error object;
 * - it **throws** anything else: the todo is failed with the error's message as the summary,
 *   `{"error": "<name>"}` as the result and {@link errorOf} (its name, message and stack) as the
 *   attempt's error object (retried with backoff, dead-lettered at its `max_attempts`).
 *
 * An answer the server refuses (an artifact that is not an allowed URL, a result over its size
 * limit) fails the todo with a summary saying so, rather than leaving it to its lease.
 *
 * How it runs:
 *
 * - `concurrency` slots per queue, each long-polling `claim_next` (fenced by default, presenting
 *   `capabilities` when given) and awaiting the handler;
 * - the report carries `next` (the same claim's arguments), so a busy slot makes **one request
 *   per job**: it sends the outcome and gets its next todo in the same answer;
 * - while a handler runs its lease is extended every lease/3; a lost lease (the todo was reaped
 *   or taken over, or ran past its run-time limit: a heartbeat is also sent as the claim's
 *   `timeout_seconds` passes) aborts `ctx.signal`, and the todo is dropped without a report;
 * - the client's retries apply to every call (a 503 is sent again after `Retry-After`); beyond
 *   them, claims back off (1 s doubling to 30 s), heartbeats are tried again within the lease,
 *   and a finished todo's report is tried for two minutes, again **without** `next` (a report
 *   whose answer was lost may have claimed a todo nobody here knows of; it comes back when that
 *   lease lapses): a `conflict` after such a retry means the first one landed;
 * - {@link Worker.stop} claims nothing more, waits `graceMs` for running handlers, then aborts
 *   their `ctx.signal` and gives their leases back.
 *
 * Work must be idempotent, as with any at-least-once queue: a todo whose report never got through
 * comes back when its lease lapses.
 */
import { Client, sleep } from "./client.js";
import {
  BoardError,
  Forbidden,
  Invalid,
  LeaseLost,
  NotFound,
  Paused,
  ServerError,
  TooLarge,
  Unauthorized,
  Unavailable,
} from "./errors.js";
import { processing } from "./tracing.js";
import type { ClaimArgs, Claimed, ErrorReport, Input, Reported, Todo } from "./types.js";

const BACKOFF_START_MS = 1_000;
const BACKOFF_MAX_MS = 30_000;
const REPORT_BACKOFF_MAX_MS = 10_000; // a finished todo's report is retried more eagerly than a claim
const REPORT_RETRY_MS = 120_000; // past its lease a report can still land, if nobody took the todo
const HEARTBEAT_RETRY_MS = 2_000;
// While the endpoint's claims are paused, each slot claims again this often (a long poll answers
// `paused` at once, so the wait is here).
const PAUSED_RETRY_MS = 15_000;
const LONG_POLL_SECONDS = 30;
const SUMMARY_MAX_BYTES = 2048;
// What the server keeps of an error object (it cuts the rest): sending no more keeps the request small.
const ERROR_TYPE_MAX_BYTES = 200;
const ERROR_MESSAGE_MAX_BYTES = 4096;
const ERROR_TRACEBACK_MAX_BYTES = 64 * 1024;

export interface WorkerOptions {
  /** Slots per queue (each runs one handler at a time); a handler may set its own. Default 1. */
  concurrency?: number;
  /** The lease asked for with each claim and heartbeat, in seconds. Default 60. */
  leaseSeconds?: number;
  /** Claim with `require_fence` (a stale holder's reports are refused). Default true. */
  fence?: boolean;
  /** What the claims present as `capabilities` (default: the endpoint's defaults). */
  capabilities?: string[];
  /** The label shown in the attempt history. Default `worker (pid <pid>)`. */
  claimant?: string;
  /** The long poll of each claim, in seconds (0..30). Default 30. */
  waitSeconds?: number;
  /** How long {@link Worker.stop} waits for running handlers before releasing their todos, in ms. Default 30,000. */
  graceMs?: number;
  /** While a team admin has paused the endpoint's claims, claim again this often, in ms. Default 15,000. */
  pausedRetryMs?: number;
  /** Where the worker says what it does. Default: warnings and errors to the console. */
  log?: (level: "info" | "warn" | "error", message: string) => void;
}

/** What a handler gets beside the todo. */
export interface JobContext {
  /**
   * Aborted when the lease is lost (the outcome will not be reported), or when the worker stops
   * and the grace period is over (the todo is released).
   */
  readonly signal: AbortSignal;
  /** The whole claim: `attempt_seq`, `prior_attempts`, `lease_token`. */
  readonly claim: Claimed;
  readonly queue: string;
  /** The worker is stopping: finish soon, or the todo is released after the grace period. */
  readonly stopping: boolean;
}

export type Handler = (todo: Todo, ctx: JobContext) => unknown;

/** A handler's answer with more than a summary: all three are optional. */
export class Done {
  readonly summary: string | null;
  readonly result: unknown;
  readonly artifact: string | null;

  constructor(fields: { summary?: string | null; result?: unknown; artifact?: string | null } = {}) {
    this.summary = fields.summary ?? null;
    this.result = fields.result;
    this.artifact = fields.artifact ?? null;
  }
}

/** Thrown by a handler to give the todo back untouched (the message is the summary). */
export class Release extends Error {
  constructor(message = "released by its handler") {
    super(message);
    this.name = "Release";
  }
}

/**
 * Thrown by a handler to fail the todo with this summary (and `result`, and `error`: an error
 * object `{type, message, traceback}`) rather than its error's.
 */
export class Fail extends Error {
  readonly result: unknown;
  readonly error: ErrorReport | null;

  constructor(summary: string, options: { result?: unknown; error?: ErrorReport | null } = {}) {
    super(summary);
    this.name = "Fail";
    this.result = options.result;
    this.error = options.error ?? null;
  }
}

/**
 * The error object a failure reports: the error's name as its type, its message, and its stack
 * as the traceback (the last 64 KB: the end names the failure), each cut to what the server keeps.
 */
export function errorOf(error: unknown): ErrorReport {
  if (error instanceof Error) {
    const report: ErrorReport = {
      type: utf8Head(error.name, ERROR_TYPE_MAX_BYTES),
      message: utf8Head(error.message, ERROR_MESSAGE_MAX_BYTES),
    };
    if (typeof error.stack === "string" && error.stack !== "") {
      report.traceback = utf8Tail(error.stack, ERROR_TRACEBACK_MAX_BYTES);
    }
    return report;
  }
  return { type: typeof error, message: utf8Head(shown(error), ERROR_MESSAGE_MAX_BYTES) };
}

/** A thrown non-Error as text (its own `toString` may throw too). */
function shown(value: unknown): string {
  try {
    return String(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}

/** What became of one claimed todo (for logs and tests). */
export interface Outcome {
  todoId: string;
  queue: string;
  verdict: "completed" | "failed" | "released" | "lost" | "unreported";
  summary: string | null;
  /** Why the lease was lost, or why the report did not land. */
  error?: BoardError;
}

type ReportVerb = "complete" | "fail" | "release";
interface Report {
  verb: ReportVerb;
  fields: { summary?: string | null; result?: unknown; artifact?: string | null; error?: ErrorReport | null };
}

/** One claimed todo while its handler runs. */
class Job implements JobContext {
  readonly todo: Todo;
  readonly #controller = new AbortController();
  /** Ends heartbeats (and their retries) once the handler is done. */
  readonly finished = new AbortController();
  /** The next heartbeat. */
  beat: ReturnType<typeof setTimeout> | undefined;
  abandoned = false;
  lostBecause: BoardError | null = null;
  /** The worker's processing span's traceparent, sent with the report (tracing.ts). */
  traceparent: string | undefined;
  /** The summary of the handler's failure, which marks its processing span an error. */
  failedWith: string | undefined;
  #abandon: () => void = () => {};
  /** Resolves when the worker gives up waiting for the handler (stop's grace period is over). */
  readonly abandonment = new Promise<null>((resolve) => {
    this.#abandon = () => resolve(null);
  });

  constructor(
    readonly claim: Claimed,
    readonly queue: string,
    readonly worker: Worker,
  ) {
    this.todo = claim.todo;
  }

  get id(): string {
    return this.todo.id;
  }

  get leaseToken(): string | null {
    return this.claim.lease_token ?? null;
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  get stopping(): boolean {
    return this.worker.stopping;
  }

  lose(error: BoardError): void {
    this.lostBecause = error;
    this.#controller.abort(error);
  }

  giveUp(graceMs: number): void {
    this.abandoned = true;
    this.#controller.abort(new Error(`the worker stopped; the handler was still running after ${graceMs} ms`));
    this.#abandon();
  }
}

/** Claims todos from the queues it has handlers for and runs them; see the module's comment. */
export class Worker {
  readonly client: Client;
  readonly concurrency: number;
  readonly leaseSeconds: number;
  readonly fence: boolean;
  readonly capabilities: string[];
  readonly claimant: string;
  readonly waitSeconds: number;
  readonly graceMs: number;
  readonly pausedRetryMs: number;
  /** What became of each claimed todo, in order. */
  readonly outcomes: Outcome[] = [];
  /** The refusal that stopped the worker (a bad token, a queue outside its scope), if one did. */
  fatal: BoardError | null = null;
  readonly #log: NonNullable<WorkerOptions["log"]>;
  readonly #handlers = new Map<string, { handler: Handler; concurrency: number }>();
  readonly #running = new Map<string, Job>();
  /** One per slot (a signal per slot keeps each signal's listeners few): aborts its long poll or backoff. */
  readonly #claims = new Set<AbortController>();
  #claimsStopped: Error | null = null;
  /** The last claim met paused claims (said once, until they are resumed). */
  #paused = false;
  #stopping = false;
  #remaining: number | null = null;
  #grace: ReturnType<typeof setTimeout> | null = null;
  #run: Promise<void> | null = null;

  constructor(client: Client, options: WorkerOptions = {}) {
    if (!(client instanceof Client)) {
      throw new TypeError("Worker: the first argument must be a Client");
    }
    this.client = client;
    this.concurrency = whole("concurrency", options.concurrency ?? 1, 1);
    this.leaseSeconds = whole("leaseSeconds", options.leaseSeconds ?? 60, 1);
    this.fence = options.fence ?? true;
    this.capabilities = [...(options.capabilities ?? [])];
    this.claimant = options.claimant ?? defaultClaimant();
    this.waitSeconds = options.waitSeconds ?? LONG_POLL_SECONDS;
    if (!(this.waitSeconds >= 0 && this.waitSeconds <= LONG_POLL_SECONDS)) {
      throw new TypeError(`Worker: waitSeconds must be 0..${LONG_POLL_SECONDS}, got ${this.waitSeconds}`);
    }
    this.graceMs = whole("graceMs", options.graceMs ?? 30_000, 0);
    this.pausedRetryMs = whole("pausedRetryMs", options.pausedRetryMs ?? PAUSED_RETRY_MS, 1);
    this.#log = options.log ?? consoleLog;
  }

  // --- registering -----------------------------------------------------------------------------

  /** Work the todos of `queue` with `handler`, in `concurrency` slots (default: the worker's). */
  handle(queue: string, handler: Handler, options: { concurrency?: number } = {}): this {
    if (typeof queue !== "string" || queue === "") {
      throw new TypeError("Worker.handle: queue must be a non-empty string");
    }
    if (typeof handler !== "function") {
      throw new TypeError(`Worker.handle: the handler of ${queue} must be a function`);
    }
    if (this.#handlers.has(queue)) {
      throw new Error(`Worker.handle: queue ${queue} already has a handler`);
    }
    const concurrency = whole("concurrency", options.concurrency ?? this.concurrency, 1);
    this.#handlers.set(queue, { handler, concurrency });
    return this;
  }

  // --- control ---------------------------------------------------------------------------------

  get stopping(): boolean {
    return this.#stopping;
  }

  /**
   * Work until {@link stop}, or until `maxTodos` todos were handled. Rejects with the refusal that
   * stopped it ({@link fatal}), or an error of the worker itself.
   */
  run(options: { maxTodos?: number } = {}): Promise<void> {
    if (this.#run !== null) {
      throw new Error("Worker.run: already running (a Worker runs once)");
    }
    if (this.#handlers.size === 0) {
      throw new Error("Worker.run: no handlers: register one with worker.handle(queue, handler)");
    }
    if (options.maxTodos !== undefined) {
      this.#remaining = whole("maxTodos", options.maxTodos, 1);
    }
    this.#run = this.#slots();
    return this.#run;
  }

  /**
   * Claim nothing more; running handlers see `ctx.stopping` and get `graceMs`, then their signal
   * is aborted and their todos released. Resolves when the worker has ended (its errors are
   * {@link run}'s).
   */
  stop(): Promise<void> {
    if (!this.#stopping) {
      this.#stopping = true;
      this.#stopClaiming(new Error("the worker is stopping"));
      if (this.#run !== null) {
        this.#grace = setTimeout(() => this.#giveUpOnRunning(), this.graceMs);
      }
    }
    return (this.#run ?? Promise.resolve()).then(
      () => undefined,
      () => undefined,
    );
  }

  async #slots(): Promise<void> {
    const slots: Promise<void>[] = [];
    for (const [queue, { concurrency }] of this.#handlers) {
      for (let n = 0; n < concurrency; n++) {
        slots.push(this.#slot(queue));
      }
    }
    const ended = await Promise.allSettled(
      slots.map((slot) =>
        slot.catch((error: unknown) => {
          void this.stop(); // a bug of the worker (or a handler's contract broken): end the others too
          throw error;
        }),
      ),
    );
    if (this.#grace !== null) {
      clearTimeout(this.#grace);
    }
    const broken = ended.find((result): result is PromiseRejectedResult => result.status === "rejected");
    if (broken !== undefined) {
      throw broken.reason;
    }
    if (this.fatal !== null) {
      throw this.fatal;
    }
  }

  /** Cut the slots' long polls and backoffs short: the worker takes no more work. */
  #stopClaiming(reason: Error): void {
    this.#claimsStopped ??= reason;
    for (const claims of this.#claims) {
      claims.abort(this.#claimsStopped);
    }
  }

  get #takingWork(): boolean {
    return !this.#stopping && (this.#remaining === null || this.#remaining > 0);
  }

  #giveUpOnRunning(): void {
    for (const job of this.#running.values()) {
      job.giveUp(this.graceMs);
    }
  }

  // --- one slot: claim, run, report (and claim) ------------------------------------------------

  #claimArgs(queue: string): ClaimArgs {
    return {
      queue,
      lease_ttl_seconds: this.leaseSeconds,
      require_fence: this.fence,
      claimant: this.claimant,
      capabilities: this.capabilities.length > 0 ? this.capabilities : null,
      wait_seconds: this.waitSeconds,
    };
  }

  async #slot(queue: string): Promise<void> {
    const claims = new AbortController();
    this.#claims.add(claims);
    if (this.#claimsStopped !== null) {
      claims.abort(this.#claimsStopped);
    }
    try {
      await this.#loop(queue, claims.signal);
    } finally {
      this.#claims.delete(claims);
    }
  }

  async #loop(queue: string, claiming: AbortSignal): Promise<void> {
    let backoff = BACKOFF_START_MS;
    let claim: Claimed | null = null;
    for (;;) {
      if (claim === null) {
        if (!this.#takingWork) {
          return;
        }
        try {
          const answer = await this.client.claimNext(this.#claimArgs(queue), { signal: claiming });
          claim = Client.claimed(answer);
          backoff = BACKOFF_START_MS;
          this.#claimsResumed();
        } catch (error) {
          if (claiming.aborted) {
            return; // stopping: a long poll cut short
          }
          if (error instanceof Paused) {
            await this.#waitOutPause(error, claiming);
            continue;
          }
          if (!(error instanceof BoardError)) {
            throw error;
          }
          if (this.#refused(error, `claim from ${queue}`)) {
            return;
          }
          const delay = retryDelay(backoff, error, BACKOFF_MAX_MS);
          this.#log("warn", `cannot claim from ${queue} (${error.message}); retrying in ${seconds(delay)}`);
          await sleep(delay, claiming).catch(() => undefined); // a stop ends the wait
          backoff = Math.min(backoff * 2, BACKOFF_MAX_MS);
          continue;
        }
        if (claim === null) {
          continue;
        }
      }
      claim = await this.#work(new Job(claim, queue, this));
    }
  }

  /**
   * The endpoint's claims are paused: say so once (not once per slot and try), then claim again
   * every `pausedRetryMs` until they are resumed or the worker stops.
   */
  async #waitOutPause(error: Paused, claiming: AbortSignal): Promise<void> {
    if (!this.#paused) {
      this.#paused = true;
      this.#log("warn", `claims paused (${error.message}); waiting, claiming again every ${seconds(this.pausedRetryMs)}`);
    }
    await sleep(this.pausedRetryMs, claiming).catch(() => undefined); // a stop ends the wait
  }

  #claimsResumed(): void {
    if (this.#paused) {
      this.#paused = false;
      this.#log("info", "claims resumed; taking work again");
    }
  }

  /** A refusal of the worker itself stops it (true); anything else is worth retrying. */
  #refused(error: BoardError, what: string): boolean {
    if (
      error instanceof Unauthorized ||
      error instanceof Forbidden ||
      error instanceof Invalid ||
      error instanceof NotFound
    ) {
      this.#log("error", `the server refused this worker's ${what}: ${error.message}`);
      this.fatal ??= error;
      void this.stop();
      return true;
    }
    return false;
  }

  /** Run one job and report it; the next claim when the report carried `next`. */
  async #work(job: Job): Promise<Claimed | null> {
    if (!this.#takingWork) {
      await this.#report(job, { verb: "release", fields: { summary: "worker stopping before the handler started" } });
      return null;
    }
    const { handler } = this.#handlers.get(job.queue)!;
    this.#log("info", `claimed ${job.id} (attempt ${job.todo.attempt}): ${job.todo.title}`);
    this.#running.set(job.id, job);
    this.#heartbeat(job, this.#beatInterval());
    this.#beatAtLimit(job);
    // The handler and its report in one span, a child of the todo's trace context (tracing.ts).
    const traced = await processing(job.todo, job.queue);
    job.traceparent = traced.traceparent;
    try {
      return await traced.run(() => this.#handle(job, handler));
    } finally {
      traced.end(job.failedWith);
    }
  }

  /** The handler's run and its report (inside the todo's processing span). */
  async #handle(job: Job, handler: Handler): Promise<Claimed | null> {
    let report: Report | null;
    try {
      report = await Promise.race([outcome(handler, job), job.abandonment]);
    } finally {
      job.finished.abort();
      clearTimeout(job.beat);
      this.#running.delete(job.id);
    }
    if (report?.verb === "fail") {
      job.failedWith = report.fields.summary ?? "failed";
    }
    if (job.lostBecause !== null) {
      this.#record(job, "lost", null, job.lostBecause);
      return null;
    }
    if (report === null) {
      const reason: unknown = job.signal.reason;
      const summary = reason instanceof Error ? reason.message : "the worker stopped";
      await this.#report(job, { verb: "release", fields: { summary } });
      return null;
    }
    if (this.#remaining !== null && --this.#remaining <= 0) {
      this.#stopClaiming(new Error("the worker handled its maxTodos"));
    }
    return this.#report(job, report);
  }

  #record(job: Job, verdict: Outcome["verdict"], summary: string | null, error?: BoardError): void {
    this.outcomes.push({ todoId: job.id, queue: job.queue, verdict, summary, ...(error ? { error } : {}) });
  }

  // --- reporting -------------------------------------------------------------------------------

  /**
   * Send the report (complete and fail with `next` while taking work); while the server is out of
   * reach retry it for two minutes (or the lease, if longer), without `next`.
   */
  async #report(job: Job, report: Report, refusedAnswer = false): Promise<Claimed | null> {
    const { verb, fields } = report;
    const verdict = ({ complete: "completed", fail: "failed", release: "released" } as const)[verb];
    const giveUp = Date.now() + Math.max(this.leaseSeconds * 1000, REPORT_RETRY_MS);
    let backoff = BACKOFF_START_MS;
    let retried = false;
    for (;;) {
      const following = verb !== "release" && !retried && this.#takingWork ? this.#claimArgs(job.queue) : null;
      try {
        const answer = await this.#send(verb, job, fields, following);
        this.#log("info", `${verdict} ${job.id}`);
        this.#record(job, verdict, fields.summary ?? null);
        return answer === null || following === null ? null : this.#following(answer, job.queue);
      } catch (error) {
        if (!(error instanceof BoardError)) {
          throw error;
        }
        if (error instanceof LeaseLost) {
          if (retried) {
            // The first try had landed (or the lease lapsed meanwhile): either way it is settled.
            this.#log("info", `${verb} ${job.id}: the first try had landed, or the lease lapsed`);
            this.#record(job, verdict, fields.summary ?? null, error);
          } else {
            this.#log("error", `could not ${verb} ${job.id}: ${error.message}`);
            this.#record(job, "lost", fields.summary ?? null, error);
          }
          return null;
        }
        if ((error instanceof Invalid || error instanceof TooLarge) && verb !== "release" && !refusedAnswer) {
          // The handler's answer itself was refused (a result too large, an artifact that is not
          // a URL): fail the todo saying so, rather than leave it to its lease.
          this.#log("error", `the server refused the answer for ${job.id} (${error.message}); failing it`);
          const summary = utf8Tail(
            `the handler's answer was refused: ${error.code}: ${error.message}`,
            SUMMARY_MAX_BYTES,
          );
          return this.#report(job, { verb: "fail", fields: { summary } }, true);
        }
        const transient = error instanceof Unavailable || error instanceof ServerError;
        const delay = retryDelay(backoff, error, REPORT_BACKOFF_MAX_MS);
        if (!transient || Date.now() + delay > giveUp) {
          const after = transient ? "; its lease will lapse and the todo come back" : "";
          this.#log("error", `could not ${verb} ${job.id}: ${error.message}${after}`);
          this.#record(job, "unreported", fields.summary ?? null, error);
          if (error instanceof Unauthorized || error instanceof Forbidden) {
            this.#refused(error, verb);
          }
          return null;
        }
        this.#log("warn", `could not ${verb} ${job.id} (${error.message}); retrying in ${seconds(delay)}`);
        await sleep(delay);
        backoff = Math.min(backoff * 2, REPORT_BACKOFF_MAX_MS);
        retried = true;
      }
    }
  }

  async #send(
    verb: ReportVerb,
    job: Job,
    fields: Report["fields"],
    following: ClaimArgs | null,
  ): Promise<Reported | null> {
    const held = { id: job.id, lease_token: job.leaseToken };
    if (verb === "release") {
      await this.client.release({ ...held, summary: fields.summary ?? null, artifact: fields.artifact ?? null });
      return null;
    }
    const body: Input<"complete"> = { ...held, ...fields };
    const options = job.traceparent === undefined ? {} : { traceparent: job.traceparent };
    return this.client[verb](following === null ? body : { ...body, next: following }, options);
  }

  /** The claim a report's `next` made; its error stops the worker when it refuses the worker itself. */
  #following(answer: Reported, queue: string): Claimed | null {
    try {
      return Client.nextOf(answer);
    } catch (error) {
      if (!(error instanceof BoardError)) {
        throw error;
      }
      if (error instanceof Paused) {
        return null; // the slot's own claim meets the pause and waits it out
      }
      if (!this.#refused(error, `claim from ${queue}`)) {
        this.#log("warn", `the claim after a report on ${queue} failed (${error.message}); claiming again`);
      }
      return null;
    }
  }

  // --- heartbeats ------------------------------------------------------------------------------

  #beatInterval(): number {
    return Math.max((this.leaseSeconds * 1000) / 3, 500);
  }

  /** Extend the job's lease after `delay` ms, and so on until its handler is done. */
  #heartbeat(job: Job, delay: number): void {
    if (!job.finished.signal.aborted) {
      job.beat = setTimeout(() => void this.#beat(job), delay);
    }
  }

  /**
   * One extra heartbeat as the attempt's run-time limit passes on this process's clock (the
   * claim's `timeout_seconds`: the todo's own, else its queue's default): the server refuses it
   * (the lease is lost), so a hung handler's signal is aborted at once rather than at the next
   * regular heartbeat.
   */
  #beatAtLimit(job: Job): void {
    const limit = job.claim.timeout_seconds ?? job.todo.timeout_seconds;
    if (!limit) {
      return;
    }
    const check = setTimeout(() => void this.#beat(job, false), limit * 1000 + 100);
    job.finished.signal.addEventListener("abort", () => clearTimeout(check), { once: true });
  }

  /** A heartbeat; `chain`: schedule the next one (the regular beats), else a one-off check. */
  async #beat(job: Job, chain = true): Promise<void> {
    if (job.finished.signal.aborted || job.lostBecause !== null) {
      return;
    }
    const interval = this.#beatInterval();
    try {
      await this.client.heartbeat(
        { id: job.id, lease_ttl_seconds: this.leaseSeconds, lease_token: job.leaseToken },
        { signal: job.finished.signal },
      );
      if (chain) {
        this.#heartbeat(job, interval);
      }
    } catch (error) {
      if (job.finished.signal.aborted || job.lostBecause !== null) {
        return; // the handler is done (the report settles the lease), or the loss is known
      }
      if (!chain && (error instanceof Unavailable || error instanceof ServerError)) {
        return; // the regular heartbeats try again
      }
      if (error instanceof Unavailable || error instanceof ServerError) {
        // Again soon: never later than the regular interval, so the lease is not let go for a hint.
        const retryAfter = error instanceof Unavailable && error.retryAfter !== null ? error.retryAfter * 1000 : null;
        const delay = Math.min(retryAfter ?? HEARTBEAT_RETRY_MS, interval);
        this.#log("warn", `heartbeat for ${job.id} failed (${error.message}); retrying in ${seconds(delay)}`);
        this.#heartbeat(job, delay);
        return;
      }
      const lost =
        error instanceof BoardError ? error : new BoardError(`heartbeat failed: ${String(error)}`, { cause: error });
      this.#log("error", `lost the lease on ${job.id} (${lost.message}); its outcome will be dropped`);
      job.lose(lost);
    }
  }
}

/** The report a handler's return (or throw) makes. Never rejects. */
async function outcome(handler: Handler, job: Job): Promise<Report> {
  let answer: unknown;
  try {
    answer = await handler(job.todo, job);
  } catch (error) {
    if (error instanceof Release) {
      return { verb: "release", fields: { summary: error.message } };
    }
    if (error instanceof Fail) {
      return { verb: "fail", fields: { summary: error.message, result: error.result, error: error.error } };
    }
    const name = error instanceof Error ? error.name : typeof error;
    const message = error instanceof Error ? error.message : shown(error);
    return { verb: "fail", fields: { summary: message || name, result: { error: name }, error: errorOf(error) } };
  }
  if (answer instanceof Done) {
    return { verb: "complete", fields: { summary: answer.summary, result: answer.result, artifact: answer.artifact } };
  }
  if (typeof answer === "string") {
    return { verb: "complete", fields: { summary: utf8Tail(answer, SUMMARY_MAX_BYTES) } };
  }
  return { verb: "complete", fields: answer == null ? {} : { result: answer } };
}

/** The current backoff, or the server's Retry-After if it asks for longer, at most `ceiling`. */
function retryDelay(backoff: number, error: BoardError, ceiling: number): number {
  const retryAfter = error instanceof Unavailable && error.retryAfter !== null ? error.retryAfter * 1000 : 0;
  return Math.min(ceiling, Math.max(backoff, retryAfter));
}

/** The end of `text`, at most `maxBytes` of UTF-8 (the server would keep the start). */
function utf8Tail(text: string, maxBytes: number): string {
  const bytes = new TextEncoder().encode(text);
  if (bytes.length <= maxBytes) {
    return text;
  }
  // A character cut in two at the start decodes to U+FFFD: drop it.
  return new TextDecoder().decode(bytes.subarray(bytes.length - maxBytes)).replace(/^\uFFFD+/, "");
}

/** The start of `text`, at most `maxBytes` of UTF-8. */
function utf8Head(text: string, maxBytes: number): string {
  const bytes = new TextEncoder().encode(text);
  if (bytes.length <= maxBytes) {
    return text;
  }
  // A character cut in two at the end decodes to U+FFFD: drop it.
  return new TextDecoder().decode(bytes.subarray(0, maxBytes)).replace(/\uFFFD+$/, "");
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

function whole(name: string, value: number, least: number): number {
  if (!Number.isInteger(value) || value < least) {
    throw new TypeError(`Worker: ${name} must be a whole number of at least ${least}, got ${value}`);
  }
  return value;
}

function defaultClaimant(): string {
  const pid = typeof process === "object" && process !== null ? process.pid : undefined;
  return pid === undefined ? "board-client worker" : `board-client worker (pid ${pid})`;
}

function consoleLog(level: "info" | "warn" | "error", message: string): void {
  if (level !== "info") {
    console[level](`board worker: ${message}`);
  }
}
