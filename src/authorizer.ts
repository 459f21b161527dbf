/**
 * `createAuthorizer`: composes an authenticator (token → identity), a decider (identity + query →
 * decision), the revocation list and the watches, each built from its own options. Nothing here
 * verifies a token or reads a policy.
 */
import { createAuthenticator } from './authenticator/authenticator.js';
import type { Authorizer, ReadyOptions, ReadyReport } from './authorizer-types.js';
import { createDecider } from './decider/decider.js';
import type { AccessibleQuery, AuthorizeQuery, PermissionsQuery } from './decider/queries.js';
import { AuthorizerClosedError, IamAuthzError, PermissionDeniedError } from './errors.js';
import { logged } from './lib/logger.js';
import { refuseNulls } from './lib/option-checks.js';
import { createInventory, INVENTORY, withUngranted, type Inventory } from './inventory.js';
import { resolveOptions, type AuthorizerOptions } from './options.js';
import { Revocations } from './revocation/revocations.js';
import { RevocationSync } from './revocation/sync.js';
import type { Decision, Identity } from './types.js';
import { createWatcher, WATCH_GRANTED, type Watcher } from './watch/watcher.js';

export type { AccessibleQuery, AuthorizeQuery, PermissionsQuery };
export type { Authorizer, AuthorizerStatus, CacheStatus, ReadyOptions, ReadyReport } from './authorizer-types.js';

/** Creates an {@link Authorizer}. Throws a `TypeError` naming the option when an option is invalid. */
export function createAuthorizer(options: AuthorizerOptions): Authorizer {
  const config = resolveOptions(options);
  const { now } = config.shared;
  // Revocations: a list checked by every path of authenticate, kept in step over the hint channel.
  const revocations = new Revocations(now, config.revocation.retainSec, config.revocation.maxEntries);
  const sync = new RevocationSync(config.decider.policy.hints, revocations, (r) => { watcher.revoked(r); });
  const authenticator = createAuthenticator(config.authenticator, config.shared, (claims) => {
    sync.ensure();
    return revocations.refuses(claims);
  });
  // The authorizer owns the inventory; its guards register into it, its decider shows it each policy.
  const inventory = createInventory(undefined, config.shared.log);
  const decider = createDecider(config.decider, config.shared, {
    inForce: inventory.policyInForce,
    dropped: inventory.policyDropped,
    changed: (...a) => { watcher.policyChanged(...a); },
    hinted: (...a) => { watcher.hinted(...a); },
  });
  const watcher = createWatcher({ now, clockToleranceSec: config.authenticator.clockToleranceSec, authorize: decider.authorize, authorizeMany: decider.authorizeMany, source: decider.watching, revocations });
  const { log } = config.shared;
  // With a logger, each entry point logs what it refuses; without one, they are the components' own.
  const authenticate = log ? logged(log, authenticator.authenticate) : authenticator.authenticate;
  const authorize = log ? logged(log, decider.authorize) : decider.authorize;
  let closing: Promise<void> | undefined;

  async function check(authorization: string | undefined, query: AuthorizeQuery): Promise<{ identity: Identity; decision: Decision }> {
    const identity = await authenticate(authorization);
    const decision = await authorize(identity, query);
    if (!decision.granted) throw new PermissionDeniedError(decision, query.service, query.permission);
    return { identity, decision };
  }

  // The inventory rides on an enumerable symbol: a spread copy of the authorizer keeps its guards' registry.
  const authorizer: Authorizer & { readonly [INVENTORY]: Inventory; readonly [WATCH_GRANTED]: Watcher['watchGranted'] } = {
    mode: decider.mode,
    authenticate,
    authorize,
    authorizeMany: log ? logged(log, decider.authorizeMany) : decider.authorizeMany,
    accessible: (log ? logged(log, decider.accessible) : decider.accessible) as Authorizer['accessible'],
    permissionsFor: log ? logged(log, decider.permissionsFor) : decider.permissionsFor,
    check,
    watch: log ? logged(log, watcher.watch) : watcher.watch,
    [WATCH_GRANTED]: watcher.watchGranted,
    async revoke(revocation) {
      if (closing) throw new AuthorizerClosedError();
      await sync.revoke(revocations.entryOf(revocation));
    },
    inventory: inventory.entries,
    ungranted: inventory.ungranted,
    [INVENTORY]: inventory,
    ready: log ? logged(log, ready) : ready,
    status() {
      const { applications, hints } = decider.status();
      revocations.prune();
      return {
        issuers: authenticator.status(),
        applications: withUngranted(inventory, applications),
        hints,
        inventory: inventory.stats(),
        revocations: { entries: revocations.size, collapsed: revocations.collapsed, loaded: sync.loaded },
        watches: { open: watcher.size() },
      };
    },
    close() {
      closing ??= (async () => {
        watcher.close();
        sync.close();
        authenticator.close();
        decider.close();
        if (config.ownsDispatcher) await config.shared.dispatcher.close();
      })();
      return closing;
    },
  };
  return authorizer;

  async function ready(readyOptions: ReadyOptions = {}): Promise<ReadyReport> {
    if (closing) throw new AuthorizerClosedError();
    if (typeof readyOptions !== 'object' || (readyOptions as unknown) === null) throw new TypeError('ready: options must be an object');
    for (const key of Object.keys(readyOptions)) {
      if (key !== 'applications') throw new TypeError(`ready: unknown option "${key}"`);
    }
    refuseNulls('ready', readyOptions);
    const policies = decider.warm(readyOptions.applications, authenticator.applications);
    const loadingRevocations = sync.ready();
    // Per issuer: one IAM down does not hold back the tokens of the others; all down is a rejection.
    const outcomes = await Promise.allSettled(config.shared.issuers.map((issuer) => Promise.all([authenticator.ready(issuer), policies.get(issuer)])));
    const failed = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
    if (failed && outcomes.every((o) => o.status === 'rejected')) throw failed.reason;
    const issuers: ReadyReport['issuers'] = {};
    config.shared.issuers.forEach((issuer, i) => {
      const outcome = outcomes[i] as PromiseSettledResult<unknown>;
      const error = outcome.status === 'rejected' ? (outcome.reason as Error) : undefined;
      issuers[issuer] = error ? { ready: false, code: error instanceof IamAuthzError ? error.code : 'ERR_UNKNOWN', misconfigured: (error as { misconfigured?: unknown }).misconfigured === true, message: error.message } : { ready: true };
    });
    return { issuers, revocations: await loadingRevocations };
  }
}
