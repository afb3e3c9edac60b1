/**
 * OpenTelemetry in the client, optional: `@opentelemetry/api` is an optional peer dependency,
 * loaded on first use. When it is installed, every call carries the active span's context as the
 * W3C `traceparent` header, and the worker runs each todo in a `process <queue>` span that is a
 * **child** of the todo's stored context (one todo is one logical operation, from its producer to
 * its worker), reporting that span's context with `complete`/`fail`. Without the package, or
 * without an SDK registered, none of this costs more than a resolved promise.
 */
import type * as OtelApi from "@opentelemetry/api";

type Api = typeof OtelApi;

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
let loading: Promise<Api | null> | undefined;

/** The OpenTelemetry API, or null when it is not installed. */
export function otel(): Promise<Api | null> {
  loading ??= import("@opentelemetry/api").then(
    (api: Api) => api,
    () => null,
  );
  return loading;
}

/** A span context's W3C traceparent. */
export function traceparentOf(context: OtelApi.SpanContext): string {
  return `00-${context.traceId}-${context.spanId}-${(context.traceFlags & 0xff).toString(16).padStart(2, "0")}`;
}

/** The active span's traceparent, or undefined (no span, no SDK, or no OpenTelemetry). */
export async function activeTraceparent(): Promise<string | undefined> {
  const api = await otel();
  const context = api?.trace.getActiveSpan()?.spanContext();
  return context !== undefined && api!.trace.isSpanContextValid(context) ? traceparentOf(context) : undefined;
}

/** The context a stored traceparent names, as a remote parent. */
function parentOf(api: Api, traceparent: string | null | undefined): OtelApi.Context {
  const match = traceparent ? TRACEPARENT.exec(traceparent) : null;
  if (match === null) {
    return api.context.active();
  }
  const spanContext = { traceId: match[2]!, spanId: match[3]!, traceFlags: parseInt(match[4]!, 16), isRemote: true };
  return api.trace.setSpanContext(api.context.active(), spanContext);
}

/** A todo's processing span, as the worker opens it. */
export interface Processing {
  /** The span's traceparent, sent with the todo's report (undefined without OpenTelemetry). */
  traceparent: string | undefined;
  /** Run `work` with the span active (when a context manager is registered). */
  run<T>(work: () => Promise<T>): Promise<T>;
  /** End the span; `failed` marks it an error with that summary. */
  end(failed?: string | null): void;
}

const NOT_TRACED: Processing = { traceparent: undefined, run: (work) => work(), end: () => undefined };

/** Open `process <queue>` as a child of the todo's `traceparent`. */
export async function processing(todo: { id: string; traceparent?: string | null }, queue: string): Promise<Processing> {
  const api = await otel();
  if (api === null) {
    return NOT_TRACED;
  }
  const span = api.trace.getTracer("board-client").startSpan(
    `process ${queue}`,
    {
      kind: api.SpanKind.CONSUMER,
      attributes: {
        "messaging.system": "board",
        "messaging.operation.type": "process",
        "messaging.operation.name": "process",
        "messaging.destination.name": queue,
        "messaging.message.id": todo.id,
      },
    },
    parentOf(api, todo.traceparent),
  );
  const context = span.spanContext();
  const active = api.trace.setSpan(api.context.active(), span);
  return {
    traceparent: api.trace.isSpanContextValid(context) ? traceparentOf(context) : undefined,
    run: (work) => api.context.with(active, work),
    end: (failed) => {
      if (failed !== undefined && failed !== null) {
        span.setStatus({ code: api.SpanStatusCode.ERROR, message: failed.slice(0, 200) });
      }
      span.end();
    },
  };
}
