/**
 * A cached copy of one remote thing — an issuer's signing keys, an application's role policy — over
 * the {@link Refresher}'s state machine: what the JWKS and policy clients both need around it.
 * Start-or-join (one fetch in flight, waited for boundedly where a cancelled request may leave it
 * unsettled), a due refresh in the background (or in the request, where no background work is
 * allowed: workerd), the recording of a failed fetch (backoff, `Retry-After`, the operator's log
 * line) and what the "unavailable" error says.
 */
import { logUpstreamFailure, type Log } from './logger.js';
import { Refresher, type FetchKind, type RefresherConfig } from './refresher.js';
import { retryAfterMs } from './retry-after.js';
import { backgroundWorkAllowed } from './transport.js';
import { UpstreamError } from './upstream.js';

export type { FetchKind, RefresherStatus as CopyStatus } from './refresher.js';

export interface RemoteCopyConfig extends RefresherConfig {
  /** What is fetched, for log lines: `JWKS`, `policy API`. */
  readonly what: string;
  /** Where it is fetched from. */
  readonly url: string;
  /** The authorizer's logger: every failed fetch at `warn` (rate-limited), even while a copy is served. */
  readonly log?: Log | undefined;
}

/** Why the copy cannot be had: the last failure, for the caller's "unavailable" error. */
export interface Unavailability {
  /** The last failed fetch; `undefined` when none failed (e.g. nothing was fetched yet). */
  readonly cause: UpstreamError | undefined;
  /** True when the last failure says the URL is wrong rather than the upstream down. */
  readonly misconfigured: boolean;
}

export class RemoteCopy<T> extends Refresher<T> {
  readonly #config: RemoteCopyConfig;

  constructor(config: RemoteCopyConfig) {
    super(config);
    this.#config = config;
  }

  /**
   * Starts `fetch` when a fetch of `kind` may start (else joins the one running) and waits for it,
   * boundedly in workerd; resolves with `fallback` when nothing ran. `fetch` never rejects: it
   * records its outcome.
   */
  async refreshOrJoin<O>(fetch: () => Promise<O>, kind: FetchKind, fallback: O): Promise<O> {
    const pending = this.start(fetch, kind);
    return pending ? this.join(pending, fallback) : fallback;
  }

  /**
   * A due refresh: started in the background (nothing to wait for), or, where no background work
   * is allowed (workerd drops a request's leftover work), the promise this request must wait for.
   */
  background<O>(fetch: () => Promise<O>, fallback: O): Promise<O> | undefined {
    const pending = this.start(fetch, 'optional');
    return pending === undefined || backgroundWorkAllowed() ? undefined : this.join(pending, fallback);
  }

  /**
   * Records a failed fetch: the backoff (honouring a `Retry-After`) and the operator's log line.
   * Returns the failure as an {@link UpstreamError} (`wrap` makes one of anything else).
   */
  recordFailure(error: unknown, wrap: (error: unknown) => UpstreamError): UpstreamError {
    const failure = error instanceof UpstreamError ? error : wrap(error);
    this.failed(failure, retryAfterMs(failure, this.#config.now()));
    logUpstreamFailure(this.#config.log, this.#config.what, this.#config.url, failure);
    return failure;
  }

  /** The last failure, for the caller's "unavailable" error. */
  unavailability(): Unavailability {
    const cause = this.lastError instanceof UpstreamError ? this.lastError : undefined;
    return { cause, misconfigured: cause?.misconfigured ?? false };
  }
}
