import { context, SpanKind, SpanStatusCode, trace, TraceFlags, type Attributes, type Span } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor, type ReadableSpan, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { randomBytes } from 'node:crypto';
import type { RunSpan } from '../modules/agent_runs/model.ts';

/**
 * OpenTelemetry GenAI spans of agent runs (semantic conventions `gen_ai.*`): `invoke_agent` for a
 * stretch of a run's work, `chat` for each model call, `execute_tool` for each tool call. Every
 * ended span is kept in the run's record (agent_runs.get shows them); they are exported to an
 * OTLP/HTTP endpoint only when one is configured (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or
 * `OTEL_EXPORTER_OTLP_ENDPOINT`), off by default. No prompt, answer or tool argument is put in a
 * span: only names, ids, models, token counts and outcomes.
 */

/** Spans ended and not yet stored, by run. */
const ended = new Map<string, RunSpan[]>();

const keep: SpanProcessor = {
  onStart() {},
  onEnd(span: ReadableSpan) {
    const run = span.attributes['gen_ai.conversation.id'];
    if (typeof run !== 'string') return;
    const ctx = span.spanContext();
    const list = ended.get(run) ?? [];
    const toIso = (t: [number, number]) => new Date(t[0] * 1000 + t[1] / 1e6).toISOString();
    list.push({
      trace_id: ctx.traceId, span_id: ctx.spanId, parent_span_id: span.parentSpanContext?.spanId ?? null, name: span.name,
      start: toIso(span.startTime), end: toIso(span.endTime), status: span.status.code === SpanStatusCode.ERROR ? 'error' : 'ok',
      attributes: Object.fromEntries(Object.entries(span.attributes).filter(([, v]) => v !== undefined)) as RunSpan['attributes'],
    });
    ended.set(run, list);
  },
  forceFlush: async () => {},
  shutdown: async () => {},
};

function otlpEndpoint(env: NodeJS.ProcessEnv): string | null {
  if (env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  if (env.OTEL_EXPORTER_OTLP_ENDPOINT) return `${env.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, '')}/v1/traces`;
  return null;
}

const endpoint = otlpEndpoint(process.env);
const provider = new BasicTracerProvider({
  resource: resourceFromAttributes({ 'service.name': 'cuadra-agents' }),
  spanProcessors: [keep, ...(endpoint ? [new BatchSpanProcessor(new OTLPTraceExporter({ url: endpoint }), { scheduledDelayMillis: 500 })] : [])],
});
const tracer = provider.getTracer('cuadra-agents');

/** A new W3C trace id for a run: all its spans, across restarts, belong to one trace. */
export function newTraceId(): string {
  return randomBytes(16).toString('hex');
}

/** Starts a span of the run's trace (`parent`: a span of this process, else the run's trace itself). */
export function startSpan(name: string, traceId: string, attributes: Attributes, parent?: Span): Span {
  const parentContext = parent
    ? trace.setSpan(context.active(), parent)
    : trace.setSpanContext(context.active(), { traceId, spanId: randomBytes(8).toString('hex'), traceFlags: TraceFlags.SAMPLED, isRemote: true });
  return tracer.startSpan(name, { kind: name === 'chat' ? SpanKind.CLIENT : SpanKind.INTERNAL, attributes }, parentContext);
}

/** Ends a span, marking it failed with a short reason when `error` is given. */
export function endSpan(span: Span, attributes: Attributes = {}, error?: string): void {
  span.setAttributes(attributes);
  if (error) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: error.slice(0, 200) });
    span.setAttribute('error.type', error.slice(0, 60));
  }
  span.end();
}

/** The run's spans ended since the last call (to be stored with the run). */
export function takeSpans(run: string): RunSpan[] {
  const list = ended.get(run) ?? [];
  ended.delete(run);
  return list;
}

/** Sends what is batched to the OTLP endpoint, if one is configured. */
export function flushTraces(): Promise<void> {
  return provider.forceFlush();
}
