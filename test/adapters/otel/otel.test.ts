/**
 * `iam-authz/otel` (issue #11 §4) with the OpenTelemetry SDK's in-memory exporters: spans for
 * authenticate/authorize (errors carry their code), counters for decisions, token-cache hits,
 * authentication failures and JWKS/policy fetches; nothing after `disable()`; never the token.
 */
import { AggregationTemporality, MeterProvider, MetricReader, type ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { beforeAll, describe, expect, test } from 'vitest';
import type { Authorizer } from '../../../src/index.js';
import { instrumentIamAuthz } from '../../../adapters/otel/index.js';
import { useIam } from '../../helpers/index.js';

class CollectingReader extends MetricReader {
  constructor() { super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE }); }
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

const iam = useIam();
let authorizer: Authorizer;

beforeAll(() => { authorizer = iam.authorizer(); });

function sums(metrics: ResourceMetrics): Record<string, { attributes: Record<string, unknown>; value: number }[]> {
  const out: Record<string, { attributes: Record<string, unknown>; value: number }[]> = {};
  for (const scope of metrics.scopeMetrics) {
    for (const metric of scope.metrics) {
      out[metric.descriptor.name] = metric.dataPoints.map((p) => ({ attributes: p.attributes, value: p.value as number }));
    }
  }
  return out;
}

describe('instrumentIamAuthz', () => {
  test('spans and counters for a real request flow; nothing once disabled', async () => {
    const exporter = new InMemorySpanExporter();
    const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer('test');
    const reader = new CollectingReader();
    const meter = new MeterProvider({ readers: [reader] }).getMeter('test');
    const instrumentation = instrumentIamAuthz({ tracer, meter });
    const token = iam.token({ jti: 'otel-1' });
    try {
      const identity = await authorizer.authenticate(`Bearer ${token}`);
      await authorizer.authenticate(`Bearer ${token}`); // a cache hit
      await authorizer.authorize(identity, { service: 'vehicle-service', permission: 'READ', resource: { type: 'VIN', value: 'WVW1' } });
      await authorizer.authorize(identity, { service: 'vehicle-service', permission: 'WRITE', resource: { type: 'VIN', value: 'WVW1' } });
      await authorizer.authenticate('Bearer nope').catch(() => undefined);
    } finally {
      instrumentation.disable();
    }
    const spans = exporter.getFinishedSpans();
    expect(spans.map((s) => s.name)).toStrictEqual(['iam-authz.authenticate', 'iam-authz.authenticate', 'iam-authz.authorize', 'iam-authz.authorize', 'iam-authz.authenticate']);
    expect(spans[2]!.attributes).toMatchObject({ 'iam_authz.service': 'vehicle-service', 'iam_authz.permission': 'READ', 'iam_authz.granted': true, 'iam_authz.reason': 'GRANTED' });
    expect(spans[3]!.attributes).toMatchObject({ 'iam_authz.granted': false, 'iam_authz.reason': 'PERMISSION_NOT_GRANTED' });
    expect(spans[4]!.status).toMatchObject({ code: 2, message: 'ERR_TOKEN_INVALID' });
    expect(JSON.stringify(spans.map((s) => [s.attributes, s.status, s.events]))).not.toContain(token.split('.')[2]);

    const { resourceMetrics } = await reader.collect();
    const m = sums(resourceMetrics);
    expect(m['iam_authz.decisions']).toEqual(expect.arrayContaining([
      { attributes: { granted: true, reason: 'GRANTED', service: 'vehicle-service', permission: 'READ', shadow: false }, value: 1 },
      { attributes: { granted: false, reason: 'PERMISSION_NOT_GRANTED', service: 'vehicle-service', permission: 'WRITE', shadow: false }, value: 1 },
    ]));
    expect(m['iam_authz.token_cache.hits']).toStrictEqual([{ attributes: {}, value: 1 }]);
    expect(m['iam_authz.authentication.failures']).toStrictEqual([{ attributes: { code: 'ERR_TOKEN_INVALID' }, value: 1 }]);
    expect(m['iam_authz.jwks.fetches']).toStrictEqual([{ attributes: { outcome: 'ok' }, value: 1 }]);
    expect(m['iam_authz.policy.fetches']).toStrictEqual([{ attributes: { outcome: 'fetched' }, value: 1 }]);

    // Disabled: no more spans.
    const before = exporter.getFinishedSpans().length;
    await authorizer.authenticate(`Bearer ${token}`);
    expect(exporter.getFinishedSpans()).toHaveLength(before);
  });

  test('options are checked', () => {
    expect(() => instrumentIamAuthz({ tracr: {} } as never)).toThrow(/unknown option "tracr"/);
  });
});
