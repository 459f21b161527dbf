/** Public data types: what a verified token looks like to the application. */

/** One access reference (`ars` element), normalised: every field is an array of strings. */
export interface AccessReference {
  /** Role keys. */
  readonly r: readonly string[];
  /** Custom resource references, each `TYPE=value`. */
  readonly c: readonly string[];
  /** Node (resource) ids. */
  readonly n: readonly string[];
}

/** The JOSE header of a verified IAM token (docs/protocol.md, "The access token"). */
export interface IamTokenHeader {
  /** Signature algorithm, e.g. `RS256`. */
  readonly alg: string;
  /** Id of the signing key in the JWKS. */
  readonly kid: string;
  /** Token format, e.g. `t1`. */
  readonly cty: string;
  readonly [parameter: string]: unknown;
}

/** The claims of a verified IAM token (docs/protocol.md, "Claims"). `ars` is always present and normalised. */
export interface IamClaims {
  /** Unique token id. */
  readonly jti?: string;
  /** Issuer: `{baseUrl}/authentication/v1`. */
  readonly iss: string;
  /** Subject: the actor id. */
  readonly sub: string;
  /** Audience: the tenant id. */
  readonly aud?: string;
  /** Expiry, seconds since the epoch. */
  readonly exp: number;
  /** Issued at, seconds since the epoch. */
  readonly iat?: number;
  /** Not before, seconds since the epoch. */
  readonly nbf?: number;
  /** Account id. */
  readonly acc?: string;
  /** Application id; the policy lookup is keyed by it. */
  readonly app: string;
  /** Tenant id (equals `aud`). */
  readonly tid?: string;
  /** Access references, normalised (missing → `[]`). */
  readonly ars: readonly AccessReference[];
  readonly [claim: string]: unknown;
}

/** A verified caller. Frozen: it may be shared between requests through the token cache. */
export interface Identity {
  /** The compact JWT as presented. Never log it. */
  readonly token: string;
  /** The verified JOSE header. */
  readonly header: IamTokenHeader;
  /** The verified claims. */
  readonly claims: IamClaims;
}
