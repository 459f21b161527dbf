/**
 * Operator events, published on `node:diagnostics_channel` so that any logger or metrics system
 * can subscribe without the library depending on one. Messages never carry a token.
 */
import { channel } from 'node:diagnostics_channel';

/** Names of every channel the library publishes on. */
export const channels = {
  /** `{ uri, keyCount, removedKids }` after a successful JWKS fetch. */
  jwksRefreshed: 'iam-authz:jwks:refreshed',
  /** `{ uri, reason, error }` after a failed JWKS fetch. */
  jwksFailed: 'iam-authz:jwks:failed',
} as const;

export const jwksRefreshed = channel(channels.jwksRefreshed);
export const jwksFailed = channel(channels.jwksFailed);
