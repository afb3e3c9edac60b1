/**
 * The client's retry rules. A 503, a connection cut mid-call or a proxy's 502 cannot be had from
 * a healthy Board on demand, so these tests answer from a local stub server: they are about what
 * the client does with an answer, not about the Board.
 */
import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { after, test } from "node:test";

import { Client, LeaseLost, ServerError, Unavailable } from "../index.js";

type Reply = (request: IncomingMessage, response: ServerResponse) => void;

/** A server answering its n-th request with `replies[n]` (the last one again after that). */
class Stub {
  hits = 0;
  readonly server: Server;
  readonly ready: Promise<string>;

  constructor(replies: Reply[]) {
    this.server = createServer((request, response) => {
      const reply = replies[Math.min(this.hits, replies.length - 1)];
      this.hits += 1;
      request.resume();
      request.on("end", () => reply?.(request, response));
    });
    this.ready = new Promise((resolve) => {
      this.server.listen(0, "127.0.0.1", () => {
        resolve(`http://127.0.0.1:${(this.server.address() as AddressInfo).port}`);
      });
    });
    stubs.push(this);
  }

  async client(options: ConstructorParameters<typeof Client>[2] = {}): Promise<Client> {
    return new Client(await this.ready, "bd_stub", { backoffMs: 10, backoffMaxMs: 50, retries: 2, ...options });
  }
}

const stubs: Stub[] = [];
after(() => {
  for (const stub of stubs) {
    stub.server.closeAllConnections();
    stub.server.close();
  }
});

function json(status: number, body: unknown, headers: Record<string, string> = {}): Reply {
  return (_request, response) => {
    response.writeHead(status, { "Content-Type": "application/json", "X-Request-Id": "stub", ...headers });
    response.end(JSON.stringify(body));
  };
}

const unavailable = (retryAfter: number, header = true) =>
  json(
    503,
    { error: { code: "unavailable", message: "the database is unreachable; retry", retry_after: retryAfter } },
    header ? { "Retry-After": String(retryAfter) } : {},
  );
/** The connection is cut once the request arrived: the call may have landed. */
const cut: Reply = (request) => request.socket.destroy();
/** No answer at all. */
const silent: Reply = () => {};

test("a 503 is retried after its Retry-After, for every verb", async () => {
  const stub = new Stub([unavailable(1), json(200, { empty: true })]);
  const agent = await stub.client();
  const started = Date.now();
  assert.deepEqual(await agent.claimNext({ queue: "q" }), { empty: true });
  assert.equal(stub.hits, 2);
  assert.ok(Date.now() - started >= 950, "waited for Retry-After, not the 10 ms backoff");
});

test("a 503 past the retries is Unavailable with its retryAfter", async () => {
  const stub = new Stub([unavailable(2)]);
  const agent = await stub.client({ retries: 0 });
  await assert.rejects(agent.complete({ id: "td_1" }), (error: unknown) => {
    assert.ok(error instanceof Unavailable);
    assert.equal(error.retryAfter, 2);
    assert.equal(error.status, 503);
    assert.equal(error.outcomeUnknown, false, "Board's own 503: nothing was written");
    assert.equal(error.requestId, "stub");
    return true;
  });
  assert.equal(stub.hits, 1);
});

test("without a Retry-After header, the envelope's retry_after is taken", async () => {
  const stub = new Stub([unavailable(3, false)]);
  const agent = await stub.client({ retries: 0 });
  await assert.rejects(agent.listTodos(), (error: unknown) => error instanceof Unavailable && error.retryAfter === 3);
});

test("a cut connection is not retried for a verb unsafe to repeat", async () => {
  for (const call of [
    (agent: Client) => agent.claimNext(),
    (agent: Client) => agent.complete({ id: "td_1" }),
    (agent: Client) => agent.createFor({ queue: "q", title: "no key" }),
    (agent: Client) =>
      agent.createBatch({
        items: [
          { queue: "q", title: "a", idempotency_key: "k" },
          { queue: "q", title: "b" },
        ],
      }),
    (agent: Client) => agent.fireSchedule({ id: "00000000-0000-0000-0000-000000000000" }),
  ]) {
    const stub = new Stub([cut]);
    await assert.rejects(call(await stub.client()), (error: unknown) => {
      assert.ok(error instanceof Unavailable, String(error));
      assert.equal(error.status, 0);
      assert.equal(error.outcomeUnknown, true);
      assert.match(error.message, /may or may not have landed/);
      return true;
    });
    assert.equal(stub.hits, 1, "sent once");
  }
});

test("a cut connection is retried for a verb safe to repeat", async () => {
  for (const call of [
    (agent: Client) => agent.listTodos(),
    (agent: Client) => agent.heartbeat({ id: "td_1" }),
    (agent: Client) => agent.createFor({ queue: "q", title: "keyed", idempotency_key: "k" }),
    (agent: Client) =>
      agent.createBatch({
        items: [
          { queue: "q", title: "a", idempotency_key: "k1" },
          { queue: "q", title: "b", idempotency_key: "k2" },
        ],
      }),
  ]) {
    const stub = new Stub([cut, cut, json(200, { ok: "at last" })]);
    assert.deepEqual(await call(await stub.client()), { ok: "at last" });
    assert.equal(stub.hits, 3);
  }
  const stub = new Stub([cut]);
  await assert.rejects((await stub.client()).listTodos(), /gave up after 3 tries/);
  assert.equal(stub.hits, 3);
});

test("a refused connection is retried for every verb: the request never left", async () => {
  const stub = new Stub([silent]);
  const url = await stub.ready;
  await new Promise((resolve) => stub.server.close(resolve)); // nothing listens there now
  let tries = 0;
  const counting: typeof fetch = (input, init) => {
    tries += 1;
    return fetch(input, init);
  };
  const agent = new Client(url, "bd_stub", { retries: 2, backoffMs: 10, fetch: counting });
  await assert.rejects(agent.claimNext(), (error: unknown) => {
    assert.ok(error instanceof Unavailable);
    assert.equal(error.outcomeUnknown, false);
    assert.match(error.message, /never sent/);
    return true;
  });
  assert.equal(tries, 3);
});

test("a timeout is a lost answer: not retried for a claim", async () => {
  const stub = new Stub([silent]);
  const agent = await stub.client({ timeoutMs: 300 });
  const started = Date.now();
  await assert.rejects(agent.claimNext(), (error: unknown) => {
    assert.ok(error instanceof Unavailable);
    assert.match(error.message, /no answer within 300 ms/);
    return true;
  });
  assert.equal(stub.hits, 1);
  assert.ok(Date.now() - started < 3_000);
});

test("a long poll's timeout covers its wait", async () => {
  const slow: Reply = (request, response) => setTimeout(() => json(200, { empty: true })(request, response), 600);
  const stub = new Stub([slow]);
  const agent = await stub.client({ timeoutMs: 300 });
  assert.deepEqual(await agent.claimNext({ wait_seconds: 1 }), { empty: true });
});

test("a proxy's 502 may hide a call that landed: retried only when safe", async () => {
  const badGateway: Reply = (_request, response) => {
    response.writeHead(502, { "Content-Type": "text/html" });
    response.end("<html>bad gateway</html>");
  };
  const unsafe = new Stub([badGateway]);
  await assert.rejects((await unsafe.client()).complete({ id: "td_1" }), (error: unknown) => {
    return error instanceof Unavailable && error.outcomeUnknown && error.status === 502;
  });
  assert.equal(unsafe.hits, 1);
  const safe = new Stub([badGateway, json(200, { todos: [], next_cursor: null })]);
  assert.deepEqual(await (await safe.client()).listTodos(), { todos: [], next_cursor: null });
  assert.equal(safe.hits, 2);
});

test("a conflict after a 503 says the report may have landed", async () => {
  const stub = new Stub([unavailable(0), json(409, { error: { code: "conflict", message: "todo td_1 is done" } })]);
  await assert.rejects((await stub.client()).complete({ id: "td_1" }), (error: unknown) => {
    return error instanceof LeaseLost && /earlier try was answered 503/.test(error.message);
  });
});

test("a success that is not a JSON object is a ServerError", async () => {
  const stub = new Stub([(_request, response) => response.end("ok")]);
  await assert.rejects((await stub.client()).listTodos(), ServerError);
});

test("an abort stops the retries at once", async () => {
  const stub = new Stub([unavailable(30)]);
  const agent = await stub.client();
  const controller = new AbortController();
  setTimeout(() => controller.abort(new Error("stop now")), 200);
  const started = Date.now();
  await assert.rejects(agent.claimNext({}, { signal: controller.signal }), /stop now/);
  assert.ok(Date.now() - started < 5_000);
});
