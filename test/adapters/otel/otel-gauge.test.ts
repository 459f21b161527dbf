/**
 * `iam-authz/otel`'s `instrumentAuthorizer`: observable gauges of cache age, state and failures,
 * fed from `authorizer.status()`, read through an OpenTelemetry SDK metric reader.
 */
import { AggregationTemporality, MeterProvider, MetricReader, type GaugeMetricData } from '@opentelemetry/sdk-metrics';
import { expect, test } from 'vitest';
import { instrumentAuthorizer } from '../../../adapters/otel/index.js';
import { useIam } from '../../helpers/index.js';

class CollectingReader extends MetricReader {
  constructor() { super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE }); }
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

const iam = useIam();

async function gauges(reader: MetricReader): Promise<Record<string, { value: number; attributes: Record<string, unknown> }[]>> {
  const { resourceMetrics } = await reader.collect();
  const out: Record<string, { value: number; attributes: Record<string, unknown> }[]> = {};
  for (const scope of resourceMetrics.scopeMetrics) {
    for (const metric of scope.metrics as GaugeMetricData[]) {
      out[metric.descriptor.name] = metric.dataPoints.map((p) => ({ value: p.value, attributes: { ...p.attributes } }));
    }
  }
  return out;
}

test('cache age, state and failures per issuer and application, as status() reports them', async () => {
  const { clock, issuer } = iam;
  const authz = iam.authorizer({ policy: { ttlMs: 10_000 } });
  const reader = new CollectingReader();
  const provider = new MeterProvider({ readers: [reader] });
  const instrumentation = instrumentAuthorizer(authz, { meter: provider.getMeter('test') });

  let seen = await gauges(reader);
  expect(seen['iam_authz.cache.state']).toEqual([{ value: 3, attributes: { kind: 'jwks', issuer } }]);
  expect(seen['iam_authz.cache.age'] ?? []).toEqual([]);

  await authz.check(iam.bearer(), { service: 'vehicle-service', permission: 'READ', resource: { type: 'VIN', value: 'WVW1' } });
  clock.advance(12_000);
  seen = await gauges(reader);
  expect(seen['iam_authz.cache.age']).toEqual(expect.arrayContaining([
    { value: 12_000, attributes: { kind: 'jwks', issuer } },
    { value: 12_000, attributes: { kind: 'policy', issuer, application: 'app-1' } },
  ]));
  expect(seen['iam_authz.cache.state']).toEqual(expect.arrayContaining([
    { value: 0, attributes: { kind: 'jwks', issuer } },
    { value: 1, attributes: { kind: 'policy', issuer, application: 'app-1' } },
  ]));
  expect(seen['iam_authz.cache.failures']).toHaveLength(2);
  expect(seen['iam_authz.hints.connected'] ?? []).toEqual([]);

  // Disabled: no more observations (the SDK repeats the last ones; the age no longer moves).
  instrumentation.disable();
  clock.advance(1_000);
  seen = await gauges(reader);
  expect(seen['iam_authz.cache.age']).toEqual(expect.arrayContaining([{ value: 12_000, attributes: { kind: 'jwks', issuer } }]));
  await provider.shutdown();
});

test('misuse is a TypeError', () => {
  expect(() => instrumentAuthorizer({} as never)).toThrow(/instrumentAuthorizer: pass an authorizer/);
  expect(() => instrumentAuthorizer({ status: () => ({ issuers: {}, applications: {}, hints: null, inventory: { entries: 0, maxEntries: 5_000, dropped: 0 }, revocations: { entries: 0, collapsed: false, loaded: 'none' }, watches: { open: 0 } }) }, { metre: 1 } as never)).toThrow(/unknown option "metre"/);
});
