/**
 * Traces (src/tracing.ts) against a live Board, with OpenTelemetry's SDK recording in memory: the
 * producer's context is kept with the todo, the worker's `process <queue>` span is its child, and
 * the worker's own context is kept on the attempt it completes.
 */
import assert from "node:assert/strict";
import { test } from "node:test";

import { trace } from "@opentelemetry/api";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";

import { Worker, type WorkerOptions } from "../index.js";
import { traceparentOf } from "../tracing.js";
import { client, drain, queue, unique } from "./board.js";

const quiet: WorkerOptions["log"] = () => {};
const exporter = new InMemorySpanExporter();
trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));

function ids(traceparent: string | null | undefined): [string, string] {
  const [, traceId, spanId] = (traceparent ?? "").split("-");
  return [traceId ?? "", spanId ?? ""];
}

test("one trace from the producer through the worker's process span to its report", { timeout: 60_000 }, async () => {
  const name = queue("traces");
  const producer = client();
  await drain(producer, name);
  const produce = trace.getTracer("producer-test").startSpan("produce");
  const context = produce.spanContext();
  const { todo } = await producer.createFor(
    { queue: name, title: unique("traced") },
    { traceparent: traceparentOf(context) },
  );
  produce.end();
  assert.deepEqual(ids(todo.traceparent), [context.traceId, context.spanId]);

  const worker = new Worker(client(), { waitSeconds: 1, claimant: "ts-traced", log: quiet });
  worker.handle(name, async () => "ok");
  await worker.run({ maxTodos: 1 });

  const process = exporter.getFinishedSpans().find((span) => span.name === `process ${name}`);
  assert.ok(process, `spans: ${exporter.getFinishedSpans().map((span) => span.name).join(", ")}`);
  assert.equal(process.attributes["messaging.operation.type"], "process");
  assert.equal(process.attributes["messaging.message.id"], todo.id);
  assert.equal(process.spanContext().traceId, context.traceId);
  assert.equal(process.parentSpanContext?.spanId, context.spanId);

  const detail = await producer.getTodo({ id: todo.id });
  assert.deepEqual(ids(detail.attempts[0]?.traceparent), [context.traceId, process.spanContext().spanId]);
});
