/**
 * What the tests share: the live Board they call (from the environment that
 * tests/clients/test_typescript_client.py sets), clients of it, and a fetch that records requests.
 */
import { Client, type ClientOptions } from "../index.js";

function required(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === "") {
    throw new Error(
      `${name} is not set: these tests run against a live Board through ` +
        "tests/clients/test_typescript_client.py (or set BOARD_URL, BOARD_TOKEN, BOARD_ENDPOINT, " +
        "BOARD_NARROW_TOKEN and BOARD_QUEUES yourself)",
    );
  }
  return value;
}

export const board = {
  url: required("BOARD_URL"),
  /** An endpoint with every verb, in the queues of {@link queue}. */
  token: required("BOARD_TOKEN"),
  /** Its slug, for create_for's `endpoint`. */
  endpoint: required("BOARD_ENDPOINT"),
  /** A producer of the same team: create_for and list_todos, in "default" only. */
  narrowToken: required("BOARD_NARROW_TOKEN"),
  queues: required("BOARD_QUEUES").split(","),
};

/** A queue of the endpoint's scope: each test file works its own, so files may run side by side. */
export function queue(name: string): string {
  if (!board.queues.includes(name)) {
    throw new Error(
      `queue ${name} is not in BOARD_QUEUES (${board.queues.join(", ")}): add it to QUEUES in the pytest driver`,
    );
  }
  return name;
}

export function client(options: ClientOptions = {}, token = board.token): Client {
  return new Client(board.url, token, { backoffMs: 50, ...options });
}

let counter = 0;
/** A title or key no other test uses. */
export function unique(prefix: string): string {
  counter += 1;
  return `${prefix}-${process.pid}-${Date.now()}-${counter}`;
}

export interface Sent {
  verb: string;
  body: Record<string, unknown>;
}

/** A fetch that records each request's verb and body, then sends it with the real fetch. */
export class Recorder {
  readonly sent: Sent[] = [];
  readonly fetch: typeof fetch;

  constructor(inner: typeof fetch = globalThis.fetch) {
    this.fetch = (input, init) => {
      this.sent.push({ verb: String(input).split("/").pop() ?? "", body: JSON.parse(String(init?.body ?? "{}")) });
      return inner(input, init);
    };
  }

  verbs(): string[] {
    return this.sent.map((request) => request.verb);
  }

  count(verb: string): number {
    return this.sent.filter((request) => request.verb === verb).length;
  }

  bodies(verb: string): Record<string, unknown>[] {
    return this.sent.filter((request) => request.verb === verb).map((request) => request.body);
  }
}

/** Claim and complete whatever an earlier run left in `name`, so a test starts from an empty queue. */
export async function drain(board: Client, name: string): Promise<void> {
  for (;;) {
    const claimed = Client.claimed(await board.claimNext({ queue: name }));
    if (claimed === null) {
      return;
    }
    await board.complete({ id: claimed.todo.id, summary: "drained before a test" });
  }
}

/** Resolves when `predicate` holds, checking every 20 ms; rejects after `timeoutMs`. */
export async function until(predicate: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
