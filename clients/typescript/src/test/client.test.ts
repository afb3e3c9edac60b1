/** Every verb family round-trips against a live Board, and the fence is kept and sent. */
import assert from "node:assert/strict";
import { test } from "node:test";

import { Client, Invalid, LeaseLost, NotFound } from "../index.js";
import { board, client, drain, queue, Recorder, unique } from "./board.js";

test("create_for creates once per idempotency key, and hands a todo to another endpoint", async () => {
  const agent = client();
  const key = unique("key");
  const first = await agent.createFor({
    queue: queue("client"),
    title: "build 1841",
    payload: { sha: "9f2c" },
    idempotency_key: key,
  });
  assert.equal(first.created, true);
  assert.equal(first.todo.state, "pending");
  assert.deepEqual(first.todo.payload, { sha: "9f2c" });
  const again = await agent.createFor({ queue: queue("client"), title: "build 1841", idempotency_key: key });
  assert.equal(again.created, false);
  assert.equal(again.todo.id, first.todo.id);

  const producer = client({}, board.narrowToken);
  const handed = await producer.createFor({ queue: "default", title: unique("handed"), endpoint: board.endpoint });
  const seen = await agent.getTodo({ id: handed.todo.id });
  assert.equal(seen.todo.title, handed.todo.title, "the worker endpoint sees the todo handed to it");
  await drain(agent, queue("client"));
  await drain(agent, "default");
});

test("create_batch answers each item in order; a bad item is named and nothing is written", async () => {
  const agent = client();
  const name = queue("client");
  const key = unique("batch");
  const { results } = await agent.createBatch({
    items: [
      { queue: name, title: "one", idempotency_key: key },
      { queue: name, title: "two", payload: { x: 2 } },
      { queue: name, title: "one again", idempotency_key: key },
    ],
  });
  assert.deepEqual(
    results.map((r) => [r.ok, r.created, r.todo?.title]),
    [
      [true, true, "one"],
      [true, true, "two"],
      [true, false, "one"],
    ],
  );
  const before = (await agent.listTodos({ queue: name, limit: 200 })).todos.length;
  await assert.rejects(
    agent.createBatch({
      items: [
        { queue: name, title: "fine" },
        { queue: name, title: "" },
      ],
    }),
    (error: unknown) => error instanceof Invalid && error.field === "items[1].title" && error.status === 400,
  );
  const after = (await agent.listTodos({ queue: name, limit: 200 })).todos.length;
  assert.equal(after, before, "nothing of the refused batch was written");
  await drain(agent, name);
});

test("list_todos pages newest first by cursor; get_todo answers the attempts", async () => {
  const agent = client();
  const name = queue("client");
  const titles = [unique("page"), unique("page"), unique("page")];
  for (const title of titles) {
    await agent.createFor({ queue: name, title });
  }
  const first = await agent.listTodos({ queue: name, state: "pending", limit: 2 });
  assert.equal(first.todos.length, 2);
  assert.notEqual(first.next_cursor, null);
  const second = await agent.listTodos({ queue: name, state: "pending", limit: 2, cursor: first.next_cursor });
  assert.deepEqual(
    [...first.todos, ...second.todos].slice(0, 3).map((todo) => todo.title),
    [...titles].reverse(),
  );
  const claimed = Client.claimed(await agent.claimNext({ queue: name, claimant: "ts-test" }));
  assert.ok(claimed);
  const detail = await agent.getTodo({ id: claimed.todo.id, attempts_limit: 5 });
  assert.equal(detail.todo.state, "claimed");
  assert.equal(detail.attempts.length, 1);
  assert.equal(detail.attempts[0]?.claimant, "ts-test");
  assert.equal(detail.attempts_total, 1);
  assert.deepEqual(detail.after, []);
  assert.equal(detail.parents_left, 0);
  assert.equal(claimed.timeout_seconds, null, "no limit of its own, and no queue default");
  const child = await agent.createFor({ queue: name, title: unique("child"), after: [claimed.todo.id] });
  const waiting = await agent.getTodo({ id: child.todo.id });
  assert.deepEqual(waiting.after, [claimed.todo.id]);
  assert.equal(waiting.parents_left, 1);
  await agent.complete({ id: claimed.todo.id });
  assert.equal((await agent.getTodo({ id: child.todo.id })).parents_left, 0);
  await drain(agent, name);
});

test("claim_next long-polls until work arrives, and answers empty when none does", async () => {
  const agent = client();
  const name = queue("poll");
  await drain(agent, name);
  const empty = await agent.claimNext({ queue: name, wait_seconds: 0.3 });
  assert.deepEqual(empty, { empty: true });

  const started = Date.now();
  const waiting = agent.claimNext({ queue: name, wait_seconds: 20 });
  await new Promise((resolve) => setTimeout(resolve, 400));
  const created = await client().createFor({ queue: name, title: unique("arrives") });
  const claimed = Client.claimed(await waiting);
  assert.ok(claimed, "the long poll answered the todo created while it waited");
  assert.equal(claimed.todo.id, created.todo.id);
  assert.ok(Date.now() - started < 15_000, "woken by the new todo, not by the end of the wait");
  await agent.complete({ id: claimed.todo.id });
});

test("a long poll is cut short by its signal", async () => {
  const agent = client();
  await drain(agent, queue("poll"));
  const controller = new AbortController();
  const started = Date.now();
  setTimeout(() => controller.abort(new Error("enough")), 200);
  await assert.rejects(
    agent.claimNext({ queue: queue("poll"), wait_seconds: 20 }, { signal: controller.signal }),
    /enough/,
  );
  assert.ok(Date.now() - started < 5_000);
});

test("the fence: a fenced claim's token is kept and sent with its heartbeats and reports", async () => {
  const recorder = new Recorder();
  const agent = client({ fetch: recorder.fetch });
  const name = queue("fence");
  await drain(agent, name);
  const a = await agent.createFor({ queue: name, title: unique("a") });
  const b = await agent.createFor({ queue: name, title: unique("b") });

  const claimed = Client.claimed(await agent.claimNext({ queue: name, require_fence: true }));
  assert.ok(claimed);
  assert.equal(claimed.todo.id, a.todo.id);
  const token = claimed.lease_token;
  assert.equal(typeof token, "string");
  assert.equal(agent.leaseToken(a.todo.id), token);

  const beat = await agent.heartbeat({ id: a.todo.id, lease_ttl_seconds: 120 });
  assert.equal(beat.todo.state, "claimed");
  assert.equal(recorder.bodies("heartbeat")[0]?.lease_token, token, "the kept token was sent");

  // complete with next: the report and the next claim in one round trip.
  const reported = await agent.complete({
    id: a.todo.id,
    summary: "built",
    result: { ok: true },
    next: { queue: name, require_fence: true },
  });
  assert.equal(reported.todo.state, "done");
  assert.equal(recorder.bodies("complete")[0]?.lease_token, token);
  assert.equal(agent.leaseToken(a.todo.id), undefined, "a reported todo's token is dropped");
  const following = Client.nextOf(reported);
  assert.ok(following, "the report's answer carries the next todo");
  assert.equal(following.todo.id, b.todo.id);
  assert.equal(following.todo.state, "claimed");
  assert.equal(agent.leaseToken(b.todo.id), following.lease_token, "next's token is kept too");

  const failed = await agent.fail({ id: b.todo.id, summary: "broke", result: { exit: 1 } });
  assert.equal(recorder.bodies("fail")[0]?.lease_token, following.lease_token);
  assert.equal(failed.todo.dead_letter, false);
  assert.notEqual(failed.todo.next_retry_at, null, "a failure with attempts left waits for its retry");
  const detail = await agent.getTodo({ id: b.todo.id });
  assert.equal(detail.attempts[0]?.outcome, "failed");
  assert.equal(detail.attempts[0]?.summary, "broke");
});

test("a stale lease token answers LeaseLost, and the kept one still works", async () => {
  const agent = client();
  const name = queue("fence");
  const { todo } = await agent.createFor({ queue: name, title: unique("stale") });
  const first = await agent.claim({ id: todo.id, require_fence: true });
  const stale = first.lease_token;
  assert.ok(stale);
  const released = await agent.release({ id: todo.id, summary: "later" });
  assert.equal(released.todo.state, "pending");
  const second = await agent.claim({ id: todo.id, require_fence: true });
  assert.notEqual(second.lease_token, stale);

  await assert.rejects(agent.heartbeat({ id: todo.id, lease_token: stale }), LeaseLost);
  await assert.rejects(agent.complete({ id: todo.id, lease_token: stale }), (error: unknown) => {
    return error instanceof LeaseLost && error.status === 409 && error.code === "conflict";
  });
  assert.equal(agent.leaseToken(todo.id), second.lease_token, "a caller's own refused token drops nothing");
  const done = await agent.complete({ id: todo.id, summary: "with the kept token" });
  assert.equal(done.todo.state, "done");
});

test("claim_batch and complete_batch", async () => {
  const recorder = new Recorder();
  const agent = client({ fetch: recorder.fetch });
  const name = queue("fence");
  await drain(agent, name);
  await agent.createBatch({ items: [1, 2, 3].map((n) => ({ queue: name, title: unique(`batch ${n}`) })) });
  const { todos } = await agent.claimBatch({ queue: name, max: 5, require_fence: true, lease_ttl_seconds: 60 });
  assert.equal(todos.length, 3);
  const ids = todos.map((claim) => claim.todo.id);
  const { results } = await agent.completeBatch({ items: ids.map((id) => ({ id, summary: "batched" })) });
  assert.deepEqual(
    results.map((r) => [r.id, r.ok]),
    ids.map((id) => [id, true]),
  );
  const sent = recorder.bodies("complete_batch")[0]?.items as { id: string; lease_token?: string }[];
  assert.deepEqual(
    sent.map((item) => item.lease_token),
    todos.map((claim) => claim.lease_token),
    "each item carried its kept token",
  );
  ids.forEach((id) => assert.equal(agent.leaseToken(id), undefined));
  await assert.rejects(
    agent.completeBatch({ items: [{ id: "td_missing" }] }).then(({ results: [miss] }) => {
      throw new Error(`${miss?.ok} ${miss?.error?.code}`);
    }),
    /false not_found/,
  );
});

test("the endpoint's default lease", async () => {
  const agent = client();
  const lease = await agent.getDefaultLease();
  assert.equal(typeof lease.effective_lease_ttl_seconds, "number");
  const set = await agent.setDefaultLease({ default_lease_ttl_seconds: 600 });
  assert.equal(set.default_lease_ttl_seconds, 600);
  assert.equal(set.effective_lease_ttl_seconds, 600);
  const reset = await agent.setDefaultLease({ default_lease_ttl_seconds: null });
  assert.equal(reset.default_lease_ttl_seconds, null);
});

test("the schedule verbs", async () => {
  const agent = client();
  const name = unique("nightly");
  const definition = { name, cron: "0 3 * * *", timezone: "Europe/Berlin", queue: queue("schedules"), title: "Audit" };
  const { schedule } = await agent.createSchedule({ ...definition, payload: { deep: true } });
  assert.equal(schedule.name, name);
  assert.equal(schedule.paused, false);
  assert.deepEqual(schedule.payload, { deep: true });

  const listed = await agent.listSchedules({ limit: 200 });
  assert.ok(listed.schedules.some((s) => s.id === schedule.id));

  const updated = await agent.updateSchedule({ id: schedule.id, ...definition, cron: "0 4 * * *", missed: "catch_up" });
  assert.equal(updated.schedule.cron, "0 4 * * *");
  assert.equal(updated.schedule.payload, null, "a field left out of an update takes its default");

  assert.equal((await agent.pauseSchedule({ id: schedule.id })).schedule.paused, true);
  assert.equal((await agent.resumeSchedule({ id: schedule.id })).schedule.paused, false);

  const fired = await agent.fireSchedule({ id: schedule.id });
  assert.equal(fired.schedule.fires[0]?.how, "manual");
  const todo = await agent.getTodo({ id: fired.todo_id });
  assert.equal(todo.todo.source, "schedule");

  const deleted = await agent.deleteSchedule({ id: schedule.id });
  assert.deepEqual(deleted, { id: schedule.id, name, deleted: true });
  await assert.rejects(agent.pauseSchedule({ id: schedule.id }), NotFound);
  await drain(agent, queue("schedules"));
});
