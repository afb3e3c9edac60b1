/**
 * The error object from TypeScript: `errorOf` (name, message, stack), the client's `fail`,
 * `complete` and each `complete_batch` item carrying an `error`, and the Worker reporting a throwing handler's error on the
 * attempt, against a live Board.
 */
import assert from "node:assert/strict";
import { test } from "node:test";

import { Client, errorOf, Fail, Worker, type WorkerOptions } from "../index.js";
import { client, drain, queue, unique } from "./board.js";

const quiet: WorkerOptions["log"] = () => {};

class QuotaError extends Error {
  override name = "QuotaError";
}

test("errorOf takes an error's name, message and stack", () => {
  const report = errorOf(new QuotaError("429 from the API"));
  assert.equal(report.type, "QuotaError");
  assert.equal(report.message, "429 from the API");
  assert.match(report.traceback ?? "", /^QuotaError: 429 from the API\n\s+at /);
  assert.deepEqual(errorOf("a string thrown"), { type: "string", message: "a string thrown" });
});

test("errorOf keeps the stack's last 64 KB and the message's first 4 KB, on character boundaries", () => {
  const error = new Error("é".repeat(5000));
  error.stack = "€".repeat(30_000) + "\n    at the end";
  const report = errorOf(error);
  const bytes = (text: string | null | undefined) => new TextEncoder().encode(text ?? "").length;
  assert.ok(bytes(report.traceback) <= 64 * 1024 && report.traceback?.endsWith("at the end"));
  assert.ok(!report.traceback?.startsWith("\uFFFD"));
  assert.equal(report.message, "é".repeat(2048));
});

test("fail and complete carry an error object to the attempt", { timeout: 30_000 }, async () => {
  const name = queue("failures");
  const board = client();
  await drain(board, name);
  const failing = (await board.createFor({ queue: name, title: unique("fails"), max_attempts: 1 })).todo;
  await board.claim({ id: failing.id, require_fence: true });
  await board.fail({ id: failing.id, error: { type: "Timeout", message: "30 s", traceback: "at job.ts:3" } });
  const failed = await board.getTodo({ id: failing.id });
  assert.deepEqual(failed.attempts[0]?.error, {
    type: "Timeout",
    message: "30 s",
    traceback: "at job.ts:3",
    truncated: false,
  });
  const completing = (await board.createFor({ queue: name, title: unique("completes") })).todo;
  await board.claim({ id: completing.id });
  await board.complete({ id: completing.id, error: { message: "recovered" } });
  const done = await board.getTodo({ id: completing.id });
  assert.deepEqual(done.attempts[0]?.error, { type: null, message: "recovered", traceback: null, truncated: false });
});

test("a complete_batch item carries its own error object to its attempt", { timeout: 30_000 }, async () => {
  const name = queue("failures");
  const board = client();
  await drain(board, name);
  const noisy = (await board.createFor({ queue: name, title: unique("noisy") })).todo;
  const still = (await board.createFor({ queue: name, title: unique("still") })).todo;
  await board.claim({ id: noisy.id });
  await board.claim({ id: still.id });
  const { results } = await board.completeBatch({
    items: [{ id: noisy.id, error: { type: "Retried", message: "on the second try" } }, { id: still.id }],
  });
  assert.deepEqual(
    results.map((r) => r.ok),
    [true, true],
  );
  const kept = await board.getTodo({ id: noisy.id });
  assert.deepEqual(kept.attempts[0]?.error, {
    type: "Retried",
    message: "on the second try",
    traceback: null,
    truncated: false,
  });
  assert.equal((await board.getTodo({ id: still.id })).attempts[0]?.error, null);
});

test("the Worker reports a throwing handler's error, and Fail's own", { timeout: 60_000 }, async () => {
  const name = queue("failures");
  const board = client();
  await drain(board, name);
  const thrown = (await board.createFor({ queue: name, title: unique("thrown"), max_attempts: 1 })).todo;
  const told = (await board.createFor({ queue: name, title: unique("told"), max_attempts: 1 })).todo;
  const runner = new Worker(client(), { waitSeconds: 1, claimant: "ts-errors", log: quiet });
  runner.handle(name, (todo) => {
    if (todo.id === thrown.id) {
      throw new QuotaError("over quota");
    }
    throw new Fail("gave up", { error: { type: "Upstream", message: "503" } });
  });
  await runner.run({ maxTodos: 2 });
  const error = (await board.getTodo({ id: thrown.id })).attempts[0]?.error;
  assert.equal(error?.type, "QuotaError");
  assert.equal(error?.message, "over quota");
  assert.match(error?.traceback ?? "", /^QuotaError: over quota\n\s+at /);
  const fail = (await board.getTodo({ id: told.id })).attempts[0];
  assert.equal(fail?.summary, "gave up");
  assert.deepEqual(fail?.error, { type: "Upstream", message: "503", traceback: null, truncated: false });
  assert.ok(Client.claimed(await board.claimNext({ queue: name })) === null);
});
