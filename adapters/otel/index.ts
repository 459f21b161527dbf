/**
 * `iam-authz/otel`: an OpenTelemetry bridge fed from the library's diagnostics channels — spans for
 * `authenticate` and `authorize`, counters for decisions, token-cache hits, authentication
 * failures and JWKS/policy fetches. `@opentelemetry/api` is an optional peer dependency; nothing
 * here runs unless `instrumentIamAuthz()` (or `instrumentAuthorizer()`, for cache gauges) is called, and the channels cost one property check
 * while nobody listens. Spans and metrics never carry the token.
 */
import { subscribe, tracingChannel, unsubscribe } from 'node:diagnostics_channel';
import { metrics, SpanStatusCode, trace, type Attributes, type BatchObservableResult, type Meter, type Span, type Tracer } from '@opentelemetry/api';
import { channels, type Authorizer, type Decision, type DecisionEvent, type Identity } from '../../src/index.js';
import type { CacheStatus } from '../../src/adapter/internal.js';

/** Where the spans and metrics go. */
export interface IamAuthzInstrumentationOptions {
  /** Tracer for the `iam-authz.authenticate` / `iam-authz.authorize` spans. Default: `trace.getTracer('iam-authz')` (the global provider). */
  tracer?: Tracer;
  /** Meter for the counters. Default: `metrics.getMeter('iam-authz')` (the global provider). */
  meter?: Meter;
}

/** A running instrumentation; `disable()` unsubscribes from every channel. */
export interface IamAuthzInstrumentation {
  /** Stops producing spans and metrics. Idempotent. */
  disable(): void;
}

interface TraceContext {
  span?: Span;
  error?: unknown;
  result?: unknown;
  service?: unknown;
  permission?: unknown;
}

const OPTION_KEYS = ['tracer', 'meter'];

/**
 * Subscribes to the diagnostics channels and turns them into OpenTelemetry spans and counters:
 * - spans `iam-authz.authenticate` and `iam-authz.authorize` (service, permission, granted, reason;
 *   errors recorded with their `code`);
 * - `iam_authz.decisions` {granted, reason, service, permission, shadow},
 *   `iam_authz.token_cache.hits`, `iam_authz.authentication.failures` {code},
 *   `iam_authz.jwks.fetches` and `iam_authz.policy.fetches` {outcome}.
 */
export function instrumentIamAuthz(options: IamAuthzInstrumentationOptions = {}): IamAuthzInstrumentation {
  if (typeof options !== 'object' || (options as unknown) === null) throw new TypeError('instrumentIamAuthz: options must be an object');
  for (const key of Object.keys(options)) if (!OPTION_KEYS.includes(key)) throw new TypeError(`instrumentIamAuthz: unknown option "${key}"`);
  const tracer = options.tracer ?? trace.getTracer('iam-authz');
  const meter = options.meter ?? metrics.getMeter('iam-authz');
  const decisions = meter.createCounter('iam_authz.decisions', { description: 'permission decisions (grants and denials)' });
  const cacheHits = meter.createCounter('iam_authz.token_cache.hits', { description: 'verified-token cache hits' });
  const authFailures = meter.createCounter('iam_authz.authentication.failures', { description: 'authenticate refusals and failures, by code' });
  const jwksFetches = meter.createCounter('iam_authz.jwks.fetches', { description: 'JWKS fetches, by outcome' });
  const policyFetches = meter.createCounter('iam_authz.policy.fetches', { description: 'role-policy fetches, by outcome' });

  const subscriptions: [string, (message: unknown) => void][] = [
    [channels.decision, (m) => {
      const e = m as DecisionEvent;
      decisions.add(1, { granted: e.granted, reason: e.reason, service: e.service, permission: e.permission, shadow: e.shadow });
    }],
    [channels.tokenCacheHit, () => { cacheHits.add(1); }],
    [channels.authenticateFailed, (m) => { authFailures.add(1, { code: (m as { code: string }).code }); }],
    [channels.jwksRefreshed, () => { jwksFetches.add(1, { outcome: 'ok' }); }],
    [channels.jwksFailed, (m) => { jwksFetches.add(1, { outcome: 'failed', misconfigured: (m as { misconfigured: boolean }).misconfigured }); }],
    [channels.policyFetched, () => { policyFetches.add(1, { outcome: 'fetched' }); }],
    [channels.policyRevalidated, () => { policyFetches.add(1, { outcome: 'revalidated' }); }],
    [channels.policyChanged, () => { policyFetches.add(1, { outcome: 'changed' }); }],
    [channels.policyFailed, (m) => { policyFetches.add(1, { outcome: 'failed', misconfigured: (m as { misconfigured: boolean }).misconfigured }); }],
  ];
  // Node reports a subscriber's exception as an uncaught exception (after the publish returns):
  // every handler of ours is guarded, so a failing tracer or meter costs a span, never the process.
  const guarded: [string, (message: unknown) => void][] = subscriptions.map(([name, handler]) => [name, guard(handler)]);
  for (const [name, handler] of guarded) subscribe(name, handler);

  const traced = [
    { channel: tracingChannel<unknown, TraceContext>(channels.authenticateTrace), handlers: guardAll(spanHandlers(tracer, 'iam-authz.authenticate', identityAttributes)) },
    { channel: tracingChannel<unknown, TraceContext>(channels.authorizeTrace), handlers: guardAll(spanHandlers(tracer, 'iam-authz.authorize', decisionAttributes)) },
  ];
  for (const { channel, handlers } of traced) channel.subscribe(handlers);

  let active = true;
  return {
    disable() {
      if (!active) return;
      active = false;
      for (const [name, handler] of guarded) unsubscribe(name, handler);
      for (const { channel, handlers } of traced) channel.unsubscribe(handlers);
    },
  };
}

/** Whether the one warning about a failing tracer or meter was emitted (once per process). */
let warned = false;

/** `handler`, except that what it throws becomes one process warning instead of an uncaught exception. */
function guard<T>(handler: (message: T) => void): (message: T) => void {
  return (message) => {
    try {
      handler(message);
    } catch (error) {
      if (warned) return;
      warned = true;
      process.emitWarning(`iam-authz/otel: the tracer or meter threw (${error instanceof Error ? error.name : typeof error}); that span or count is lost, requests are unaffected`, { code: 'IAM_AUTHZ_OTEL_THREW' });
    }
  };
}

function guardAll<H extends Record<string, (context: TraceContext) => void>>(handlers: H): H {
  return Object.fromEntries(Object.entries(handlers).map(([event, handler]) => [event, guard(handler)])) as H;
}

function spanHandlers(tracer: Tracer, name: string, attributesOf: (context: TraceContext) => Attributes) {
  return {
    start(context: TraceContext) {
      const attributes: Attributes = {};
      if (typeof context.service === 'string') attributes['iam_authz.service'] = context.service;
      if (typeof context.permission === 'string') attributes['iam_authz.permission'] = context.permission;
      context.span = tracer.startSpan(name, { attributes });
    },
    end() {},
    asyncStart() {},
    asyncEnd(context: TraceContext) {
      const { span } = context;
      if (!span) return;
      if (context.error === undefined) span.setAttributes(attributesOf(context));
      span.end();
    },
    error(context: TraceContext) {
      const { span, error } = context;
      if (!span) return;
      const code = (error as { code?: unknown } | null)?.code;
      // The error's code and class only: a message may name upstream URLs, never the token, but keep spans lean.
      span.setStatus({ code: SpanStatusCode.ERROR, message: typeof code === 'string' ? code : 'error' });
      span.setAttribute('iam_authz.error', typeof code === 'string' ? code : (error instanceof Error ? error.name : 'error'));
    },
  };
}

function identityAttributes(context: TraceContext): Attributes {
  const identity = context.result as Identity | undefined;
  return identity ? { 'iam_authz.application': identity.claims.app, ...(identity.claims.aud ? { 'iam_authz.tenant': identity.claims.aud } : {}) } : {};
}

function decisionAttributes(context: TraceContext): Attributes {
  const decision = context.result as Decision | undefined;
  return decision ? { 'iam_authz.granted': decision.granted, 'iam_authz.reason': decision.reason } : {};
}

/** The number `iam_authz.cache.state` reports for each state: higher is worse. */
const CACHE_STATE_VALUES: Readonly<Record<CacheStatus['state'], number>> = Object.freeze({ fresh: 0, stale: 1, failing: 2, cold: 3 });

/**
 * Observable gauges fed from `authorizer.status()` at each collection (nothing runs between them):
 * - `iam_authz.cache.age` (ms; absent while nothing is held) and `iam_authz.cache.state`
 *   (0 fresh, 1 stale, 2 failing, 3 cold: higher is worse), each with
 *   `{ kind: 'jwks', issuer }` or `{ kind: 'policy', issuer, application }`;
 * - `iam_authz.cache.failures`: consecutive failed fetches, same attributes;
 * - `iam_authz.hints.connected` (1 or 0), only with a `policy.hints` channel.
 * Optional: call it once per authorizer. `disable()` removes the callbacks.
 */
export function instrumentAuthorizer(authorizer: Pick<Authorizer, 'status'>, options: { meter?: Meter } = {}): IamAuthzInstrumentation {
  if (typeof (authorizer as { status?: unknown } | null)?.status !== 'function') throw new TypeError('instrumentAuthorizer: pass an authorizer (an object with status())');
  if (typeof options !== 'object' || (options as unknown) === null) throw new TypeError('instrumentAuthorizer: options must be an object');
  for (const key of Object.keys(options)) if (key !== 'meter') throw new TypeError(`instrumentAuthorizer: unknown option "${key}"`);
  const meter = options.meter ?? metrics.getMeter('iam-authz');
  const age = meter.createObservableGauge('iam_authz.cache.age', { description: 'age of the cached signing keys / role policy', unit: 'ms' });
  const state = meter.createObservableGauge('iam_authz.cache.state', { description: 'cache state: 0 fresh, 1 stale, 2 failing, 3 cold' });
  const failures = meter.createObservableGauge('iam_authz.cache.failures', { description: 'consecutive failed fetches of the cached copy' });
  const hints = meter.createObservableGauge('iam_authz.hints.connected', { description: 'whether the policy hint channel is connected (1) or not (0)' });
  const observe = guard((result: BatchObservableResult) => {
    const status = authorizer.status();
    const report = (s: CacheStatus, attributes: Attributes): void => {
      if (s.ageMs !== null) result.observe(age, s.ageMs, attributes);
      result.observe(state, CACHE_STATE_VALUES[s.state], attributes);
      result.observe(failures, s.consecutiveFailures, attributes);
    };
    for (const [issuer, s] of Object.entries(status.issuers)) report(s, { kind: 'jwks', issuer });
    for (const [issuer, apps] of Object.entries(status.applications)) {
      for (const [application, s] of Object.entries(apps)) report(s, { kind: 'policy', issuer, application });
    }
    if (status.hints) result.observe(hints, status.hints.connected ? 1 : 0);
  });
  const observables = [age, state, failures, hints];
  meter.addBatchObservableCallback(observe, observables);
  let active = true;
  return {
    disable() {
      if (!active) return;
      active = false;
      meter.removeBatchObservableCallback(observe, observables);
    },
  };
}
