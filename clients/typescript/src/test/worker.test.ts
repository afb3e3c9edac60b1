/**
 * The Worker against a live Board: draining with concurrency in one request per job, what a
 * handler's answer makes of its todo, heartbeats, a lost lease, stopping, and a report whose
 * answer was lost.
 */
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  Client,
  Done,
  Fail,
  Forbidden,
  LeaseLost,
  Release,
  Worker,
  type JobContext,
  type WorkerOptions,
} from "../index.js";
import { board, client, drain, queue, Recorder, unique, until } from "./board.js";

const quiet: WorkerOptions["log"] = () => {};

function worker(recorder: Recorder, options: WorkerOptions = {}): Worker {
  return new Worker(client({ fetch: recorder.fetch }), {
    waitSeconds: 1,
    claimant: "ts-worker",
    log: quiet,
    ...options,
  });
}

test("N todos drained by C slots in one request per job", { timeout: 60_000 }, async () => {
  const name = queue("worker");
  const producer = client();
  await drain(producer, name);
  const total = 12;
  const slots = 3;
  const { results } = await producer.createBatch({
    items: Array.from({ length: total }, (_, n) => ({ queue: name, title: unique(`job ${n}`), payload: { n } })),
  });
  const recorder = new Recorder();
  const drainer = worker(recorder, { concurrency: slots, waitSeconds: 3 });
  let running = 0;
  let most = 0;
  drainer.handle(name, async (todo) => {
    running += 1;
    most = Math.max(most, running);
    await new Promise((resolve) => setTimeout(resolve, 20));
    running -= 1;
    return `did ${(todo.payload as { n: number }).n}`;
  });
  await drainer.run({ maxTodos: total });

  assert.equal(drainer.outcomes.length, total);
  assert.ok(drainer.outcomes.every((outcome) => outcome.verdict === "completed"));
  assert.ok(most > 1 && most <= slots, `ran ${most} handlers at once`);
  assert.equal(recorder.count("claim_next"), slots, "one claim per slot to start");
  assert.equal(recorder.count("complete"), total, "then one report per todo, which claims the next");
  assert.equal(recorder.sent.length, slots + total, `requests: ${recorder.verbs().join(" ")}`);
  assert.ok(recorder.bodies("complete").filter((body) => body.next).length >= total - slots);
  for (const result of results) {
    const detail = await producer.getTodo({ id: result.todo!.id });
    assert.equal(detail.todo.state, "done");
    assert.equal(detail.attempts[0]?.summary, `did ${(detail.todo.payload as { n: number }).n}`);
  }
});

test("what a handler answers is how its todo ends", { timeout: 60_000 }, async () => {
  const name = queue("outcomes");
  const producer = client();
  await drain(producer, name);
  const answers: Record<string, () => unknown> = {
    text: () => "all good",
    long: () => `${"é".repeat(2000)} the end`,
    json: () => ({ pages: 3 }),
    done: () => new Done({ summary: "built", result: [1, 2], artifact: "https://example.com/out" }),
    nothing: () => undefined,
    broken: () => {
      throw new TypeError("no such file");
    },
    failed: () => {
      throw new Fail("cannot build", { result: { exit_code: 2 } });
    },
    refused: () => new Done({ summary: "fine", artifact: "ftp://not.allowed/out" }),
    later: () => {
      throw new Release("not now"); // last: released, it is claimable again
    },
  };
  const ids: Record<string, string> = {};
  let priority = 0;
  for (const title of Object.keys(answers)) {
    // In this order: lower priority claims first.
    ids[title] = (await producer.createFor({ queue: name, title, max_attempts: 1, priority: priority++ })).todo.id;
  }
  const recorder = new Recorder();
  const runner = worker(recorder);
  runner.handle(name, (todo) => answers[todo.title]!());
  await runner.run({ maxTodos: Object.keys(answers).length });

  const detail = async (title: string) => producer.getTodo({ id: ids[title]! });
  const text = await detail("text");
  assert.equal(text.todo.state, "done");
  assert.equal(text.attempts[0]?.summary, "all good");
  assert.deepEqual((await detail("json")).todo.result, { pages: 3 });
  const done = await detail("done");
  assert.deepEqual(done.todo.result, [1, 2]);
  assert.equal(done.attempts[0]?.summary, "built");
  assert.equal(done.attempts[0]?.artifact, "https://example.com/out");
  assert.equal((await detail("nothing")).todo.state, "done");
  const broken = await detail("broken");
  assert.equal(broken.todo.dead_letter, true, "thrown: failed, and with no attempt left, dead-lettered");
  assert.equal(broken.attempts[0]?.summary, "no such file");
  assert.deepEqual(broken.todo.result, { error: "TypeError" });
  const long = (await detail("long")).attempts[0]?.summary ?? "";
  assert.ok(long.endsWith(" the end") && new TextEncoder().encode(long).length <= 2048, "the last 2048 bytes");
  const later = await detail("later");
  assert.equal(later.todo.state, "pending", "Release gives the lease back");
  assert.equal(later.attempts[0]?.summary, "not now");
  const failed = await detail("failed");
  assert.equal(failed.attempts[0]?.summary, "cannot build");
  assert.deepEqual(failed.todo.result, { exit_code: 2 });
  const refused = await detail("refused");
  assert.equal(refused.todo.dead_letter, true, "an answer the server refuses fails the todo");
  assert.match(refused.attempts[0]?.summary ?? "", /^the handler's answer was refused: invalid: artifact: /);
  assert.deepEqual(
    runner.outcomes.map((outcome) => outcome.verdict),
    ["completed", "completed", "completed", "completed", "completed", "failed", "failed", "failed", "released"],
  );
  await drain(producer, name);
});

test("the lease is extended every lease/3 while the handler runs", { timeout: 60_000 }, async () => {
  const name = queue("beats");
  const producer = client();
  await drain(producer, name);
  const { todo } = await producer.createFor({ queue: name, title: unique("slow") });
  const recorder = new Recorder();
  const runner = worker(recorder, { leaseSeconds: 3 });
  runner.handle(name, async () => {
    await new Promise((resolve) => setTimeout(resolve, 3_500));
    return "slow but steady";
  });
  await runner.run({ maxTodos: 1 });
  const beats = recorder.bodies("heartbeat");
  assert.ok(beats.length >= 2, `${beats.length} heartbeats`);
  assert.ok(
    beats.every((body) => body.id === todo.id && typeof body.lease_token === "string" && body.lease_ttl_seconds === 3),
  );
  assert.equal((await producer.getTodo({ id: todo.id })).todo.state, "done");
});

/**
 * Run one hung handler on `name` under a 30 s lease (a regular beat every 10 s) until the
 * run-time limit's beat is refused: what the handler was aborted with, the limit its claim
 * answered, and the worker's outcomes and requests. A model call that never returns: only the
 * signal ends it.
 */
async function hungPastItsLimit(name: string) {
  const recorder = new Recorder();
  const runner = worker(recorder, { leaseSeconds: 30 });
  let claimedLimit: unknown = undefined;
  let aborted: unknown = null;
  runner.handle(name, async (_todo, ctx) => {
    claimedLimit = ctx.claim.timeout_seconds; // the claim answers the attempt's effective limit
    await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve, { once: true }));
    aborted = ctx.signal.reason;
    return "must not be reported";
  });
  const running = runner.run();
  // beaten as the limit passes, long before the lease's regular beat; that beat is refused
  await until(() => aborted !== null, "the handler's signal to abort", 8_000);
  await until(() => runner.outcomes.length > 0, "the outcome");
  await runner.stop();
  await running;
  assert.ok(aborted instanceof LeaseLost, `aborted with ${String(aborted)}`);
  assert.equal(runner.outcomes[0]?.verdict, "lost");
  assert.equal(recorder.count("complete") + recorder.count("fail"), 0, recorder.verbs().join(" "));
  return claimedLimit;
}

test("a hung handler past its todo's run-time limit has its signal aborted", { timeout: 60_000 }, async () => {
  const name = queue("timeout");
  const producer = client();
  await drain(producer, name);
  const { todo } = await producer.createFor({ queue: name, title: unique("hangs"), timeout_seconds: 1 });
  assert.equal(todo.timeout_seconds, 1);
  assert.equal(await hungPastItsLimit(name), 1);
  assert.equal((await producer.getTodo({ id: todo.id })).todo.state, "claimed"); // until the sweep ends it
});

test("a hung handler past its queue's default run-time limit has its signal aborted", { timeout: 60_000 }, async () => {
  // the pytest driver set this queue's team default to 1 s; the todo names no limit of its own
  const name = queue("timeout-default");
  const producer = client();
  await drain(producer, name);
  const { todo } = await producer.createFor({ queue: name, title: unique("hangs") });
  assert.equal(todo.timeout_seconds, null);
  assert.equal(await hungPastItsLimit(name), 1);
});

test("a lost lease aborts the handler's signal and drops the todo unreported", { timeout: 60_000 }, async () => {
  const name = queue("lost");
  const producer = client();
  await drain(producer, name);
  const { todo } = await producer.createFor({ queue: name, title: unique("taken away"), max_attempts: 1 });
  const recorder = new Recorder();
  const runner = worker(recorder, { leaseSeconds: 3 });
  let context: JobContext | null = null;
  let aborted: unknown = null;
  runner.handle(name, async (_todo, ctx) => {
    context = ctx;
    await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve, { once: true }));
    aborted = ctx.signal.reason;
    return "must not be reported";
  });
  const running = runner.run();
  await until(() => context !== null, "the handler to start");
  // Someone else ends the attempt (here: a failure reported with the lease's token).
  const token = (context as JobContext | null)?.claim.lease_token ?? null;
  await producer.fail({ id: todo.id, lease_token: token, summary: "taken away" });
  await until(() => aborted !== null, "the handler's signal to abort");
  await until(() => runner.outcomes.length > 0, "the outcome");
  await runner.stop();
  await running;

  assert.ok(aborted instanceof LeaseLost, `aborted with ${String(aborted)}`);
  assert.equal(runner.outcomes[0]?.verdict, "lost");
  assert.equal(
    recorder.count("complete") + recorder.count("fail") + recorder.count("release"),
    0,
    recorder.verbs().join(" "),
  );
  const detail = await producer.getTodo({ id: todo.id });
  assert.equal(detail.attempts[0]?.summary, "taken away");
});

test(
  "stop: claims no more, lets handlers finish within the grace, then releases the rest",
  { timeout: 60_000 },
  async () => {
    const name = queue("stop");
    const producer = client();
    await drain(producer, name);
    const quick = (await producer.createFor({ queue: name, title: "quick", priority: 0 })).todo;
    const stubborn = (await producer.createFor({ queue: name, title: "stubborn", priority: 1 })).todo;
    const recorder = new Recorder();
    const runner = worker(recorder, { concurrency: 2, graceMs: 1_500 });
    const started = new Set<string>();
    let stubbornSignal: AbortSignal | null = null;
    let letGo: () => void = () => {};
    const stubbornEnds = new Promise<void>((resolve) => (letGo = resolve));
    runner.handle(name, async (todo, ctx) => {
      started.add(todo.title);
      if (todo.title === "quick") {
        await until(() => ctx.stopping, "stopping");
        return "finished in time";
      }
      stubbornSignal = ctx.signal;
      await stubbornEnds; // ignores its signal
      return "too late";
    });
    const running = runner.run();
    await until(() => started.size === 2, "both handlers to start");
    const stopping = Date.now();
    await runner.stop();
    await running;
    const took = Date.now() - stopping;
    letGo(); // its outcome, after the worker gave up on it, is dropped
    await new Promise((resolve) => setTimeout(resolve, 100));

    assert.ok(took >= 1_400 && took < 10_000, `stopped in ${took} ms`);
    assert.equal((stubbornSignal as AbortSignal | null)?.aborted, true, "the handler past the grace was aborted");
    assert.equal((await producer.getTodo({ id: quick.id })).todo.state, "done");
    assert.equal((await producer.getTodo({ id: stubborn.id })).todo.state, "pending", "released");
    assert.deepEqual(
      recorder.bodies("complete").map((body) => body.next),
      [undefined],
      "no next after stop",
    );
    assert.deepEqual(
      runner.outcomes.map((outcome) => [outcome.todoId, outcome.verdict]),
      [
        [quick.id, "completed"],
        [stubborn.id, "released"],
      ],
    );
    await drain(producer, name);
  },
);

test(
  "a report whose answer was lost is sent again without next, and its conflict means it landed",
  { timeout: 60_000 },
  async () => {
    const name = queue("retry");
    const producer = client();
    await drain(producer, name);
    const first = (await producer.createFor({ queue: name, title: "first", priority: 0 })).todo;
    const second = (await producer.createFor({ queue: name, title: "second", priority: 1 })).todo;
    // The first complete reaches the Board, then its answer is lost on the way back.
    let lost = false;
    const losing: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      if (!lost && String(input).endsWith("/complete")) {
        lost = true;
        await response.arrayBuffer();
        throw new TypeError("fetch failed", { cause: new Error("other side closed") });
      }
      return response;
    };
    const recorder = new Recorder(losing);
    const runner = worker(recorder);
    runner.handle(name, (todo) => `did ${todo.title}`);
    const running = runner.run();
    await until(() => runner.outcomes.length > 0, "the first outcome");
    await runner.stop();
    await running;

    const reports = recorder.bodies("complete");
    assert.equal(reports.length, 2, recorder.verbs().join(" "));
    assert.ok(reports[0]?.next, "the first try asked for the next todo");
    assert.equal(reports[1]?.next, undefined, "the retry did not");
    assert.equal(runner.outcomes[0]?.verdict, "completed", "the conflict after the retry counts as applied");
    assert.ok(runner.outcomes[0]?.error instanceof LeaseLost);
    assert.equal((await producer.getTodo({ id: first.id })).todo.state, "done");
    // The lost answer's claim holds the second todo for nobody here: its lease lapses in time.
    assert.equal((await producer.getTodo({ id: second.id })).todo.state, "claimed");
  },
);

test("a worker the server refuses stops, and run rejects with the refusal", { timeout: 30_000 }, async () => {
  const recorder = new Recorder();
  const runner = new Worker(client({ fetch: recorder.fetch }, board.narrowToken), { waitSeconds: 1, log: quiet });
  runner.handle("default", () => "never");
  await assert.rejects(runner.run(), Forbidden);
  assert.ok(runner.fatal instanceof Forbidden);
  assert.deepEqual(recorder.verbs(), ["claim_next"]);
});

test("a worker checks what it is given", () => {
  const agent = client();
  assert.throws(() => new Worker(agent, { concurrency: 0 }), TypeError);
  assert.throws(() => new Worker(agent, { waitSeconds: 31 }), TypeError);
  assert.throws(() => new Worker({} as Client), TypeError);
  const runner = new Worker(agent);
  assert.throws(() => runner.run(), /no handlers/);
  runner.handle("default", () => null);
  assert.throws(() => runner.handle("default", () => null), /already has a handler/);
});

test("paused claims are waited out: said once, claimed again, work taken once resumed", { timeout: 60_000 }, async () => {
  const name = queue("paused");
  const producer = client();
  await drain(producer, name);
  const created = await producer.createFor({ queue: name, title: unique("after the pause") });
  // The endpoint's claims answer 423 paused three times (a team admin paused them), then run again.
  let refusals = 3;
  const paused: typeof fetch = async (input, init) => {
    if (String(input).endsWith("/claim_next") && refusals > 0) {
      refusals -= 1;
      const body = { error: { code: "paused", message: "this endpoint's claims are paused (by adam)" } };
      return new Response(JSON.stringify(body), { status: 423, headers: { "Content-Type": "application/json" } });
    }
    return globalThis.fetch(input, init);
  };
  const recorder = new Recorder(paused);
  const lines: string[] = [];
  const drainer = worker(recorder, {
    pausedRetryMs: 50,
    log: (level, message) => lines.push(`${level}: ${message}`),
  });
  drainer.handle(name, () => "done after the pause");
  await drainer.run({ maxTodos: 1 });

  assert.equal(drainer.fatal, null);
  assert.equal(refusals, 0);
  assert.equal(recorder.count("claim_next"), 4, `requests: ${recorder.verbs().join(" ")}`);
  assert.deepEqual(
    lines.filter((line) => line.includes("claims paused")),
    ["warn: claims paused (this endpoint's claims are paused (by adam)); waiting, claiming again every 0.1 s"],
  );
  assert.ok(lines.includes("info: claims resumed; taking work again"), lines.join("\n"));
  assert.equal((await producer.getTodo({ id: created.todo.id })).todo.state, "done");
});
