/** The API's refusals, from a live Board, as typed exceptions. */
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  BoardError,
  Client,
  Conflict,
  errorFor,
  Forbidden,
  Invalid,
  LeaseLost,
  MethodNotAllowed,
  NotFound,
  Paused,
  TooLarge,
  Unauthorized,
  type Input,
  type Verb,
} from "../index.js";
import { board, client, queue, unique } from "./board.js";

/** Asserts that `call` rejects with `kind`, and hands the error to `check`. */
async function refused<E extends BoardError>(
  call: Promise<unknown>,
  kind: abstract new (...args: never[]) => E,
  check: (error: E) => void = () => {},
): Promise<void> {
  await assert.rejects(call, (error: unknown) => {
    assert.ok(error instanceof kind, `expected ${kind.name}, got ${String(error)}`);
    check(error);
    return true;
  });
}

test("invalid input names the field", async () => {
  const agent = client();
  await refused(agent.createFor({ queue: queue("errors"), title: "" }), Invalid, (error) => {
    assert.equal(error.field, "title");
    assert.equal(error.code, "invalid");
    assert.equal(error.status, 400);
    assert.equal(typeof error.requestId, "string");
  });
  const unknownField = { queue: queue("errors"), title: "t", bogus: 1 } as unknown as Input<"create_for">;
  await refused(agent.createFor(unknownField), Invalid, (error) => assert.equal(error.field, "bogus"));
  await refused(agent.claimNext({ wait_seconds: 31 }), Invalid, (error) => assert.equal(error.field, "wait_seconds"));
});

test("a bad next is refused before the report is written", async () => {
  const agent = client();
  const { todo } = await agent.createFor({ queue: queue("errors"), title: unique("next") });
  await agent.claim({ id: todo.id, require_fence: true });
  await refused(agent.complete({ id: todo.id, next: { wait_seconds: 99 } }), Invalid, (error) =>
    assert.equal(error.field, "next.wait_seconds"),
  );
  assert.equal((await agent.getTodo({ id: todo.id })).todo.state, "claimed", "the todo is untouched");
  await agent.complete({ id: todo.id });
});

test("unknown todos and verbs are NotFound", async () => {
  const agent = client();
  await refused(agent.getTodo({ id: "td_does_not_exist" }), NotFound, (error) => assert.equal(error.status, 404));
  await refused(agent.call("no_such_verb" as Verb, {} as Input<"get_default_lease">), NotFound);
});

test("a verb or queue outside the scope is Forbidden", async () => {
  const producer = client({}, board.narrowToken);
  await refused(producer.claimNext(), Forbidden, (error) => assert.equal(error.status, 403));
  await refused(producer.createFor({ queue: queue("errors"), title: "elsewhere" }), Forbidden);
});

test("a bad token is Unauthorized", async () => {
  await refused(client({}, "bd_not_a_token").listTodos(), Unauthorized, (error) => assert.equal(error.status, 401));
});

test("claiming a held todo is a Conflict; a report on a lost lease is LeaseLost", async () => {
  const agent = client();
  const { todo } = await agent.createFor({ queue: queue("errors"), title: unique("held"), max_attempts: 1 });
  await agent.claim({ id: todo.id });
  await refused(agent.claim({ id: todo.id }), Conflict, (error) => {
    assert.ok(!(error instanceof LeaseLost), "a claim's conflict is not about a lease");
  });
  await agent.complete({ id: todo.id });
  await refused(agent.complete({ id: todo.id }), LeaseLost, (error) => assert.ok(error instanceof Conflict));
});

test("a body over the server's limit is TooLarge", async () => {
  const payload = "x".repeat(1_100_000);
  await refused(client().createFor({ queue: queue("errors"), title: "big", payload }), TooLarge, (error) =>
    assert.equal(error.status, 413),
  );
});

test("another method than POST is MethodNotAllowed", async () => {
  const response = await fetch(`${board.url}/api/v1/list_todos`, {
    headers: { Authorization: `Bearer ${board.token}` },
  });
  assert.equal(response.status, 405);
  const error = errorFor("list_todos", response.status, await response.json(), response.headers.get("X-Request-Id"));
  assert.ok(error instanceof MethodNotAllowed);
  assert.equal(error.code, "method_not_allowed");
});

test("bad arguments to the client itself are TypeErrors", () => {
  assert.throws(() => new Client("localhost:8000", board.token), TypeError);
  assert.throws(() => new Client(board.url, "has space"), TypeError);
  assert.throws(() => new Client(board.url, board.token, { retries: -1 }), TypeError);
});

test("a 423 paused answer is a Paused error, not a server error", () => {
  const body = { error: { code: "paused", message: "this endpoint's claims are paused (by adam)" } };
  const error = errorFor("claim_next", 423, body, "req-1");
  assert.ok(error instanceof Paused, String(error));
  assert.equal(error.code, "paused");
  assert.equal(error.status, 423);
  assert.equal(error.message, "this endpoint's claims are paused (by adam)");
});
