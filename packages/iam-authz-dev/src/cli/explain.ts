/** `iam-authz explain`: verifies a token against an IAM, fetches the policy, explains the decision. */
import { createAuthorizer, IamAuthzError, type Decision, type UngrantedPermission } from 'iam-authz';
import { escapeUnsafe, TOKEN_ENV, tokenFrom, visible } from './terminal.js';
import { parse, required, UsageError } from './usage.js';

export const EXPLAIN_HELP = `usage: iam-authz explain [--token T | --token -] --service S --permission P (--resource TYPE=value | --node ID) --iam URL

Verifies the token against the IAM at URL (issuer URL/authentication/v1, its JWKS), fetches the
role policy of the token's application and prints the decision with its reasons, and every
permission of the service the token holds on the resource, with the roles that grant it.

options:
  --token T        the IAM token (a leading "Bearer " is ignored); "--token -" reads it from stdin.
                   Without --token: from ${TOKEN_ENV} if set, else from stdin (so that the token
                   need not sit in the command line, visible to other users). Never printed.
  --service S      the consuming service's key, e.g. vehicle-service
  --permission P   the permission key, e.g. WRITE
  --resource R     the custom resource reference TYPE=value, e.g. VIN=WVW1 (the value may contain "=")
  --node ID        a node id instead of --resource
  --iam URL        the IAM's base URL, e.g. http://127.0.0.1:4000

Text from the token is printed with control and bidi characters as visible \\uXXXX escapes.

exit status: 0 granted, 3 denied, 1 token/JWKS/policy error, 2 usage error`;

const REASONS: Record<Decision['reason'], string> = {
  GRANTED: 'a role the token holds for this resource grants the permission in the policy',
  INVALID_RESOURCE: 'the resource reference is empty or malformed',
  NO_MATCHING_REFERENCE: 'no access reference in the token names this resource, so no role applies',
  ROLE_NOT_IN_POLICY: 'the token holds roles for this resource, but none of them exists in the application\'s policy',
  NO_SERVICE_POLICY: 'the roles exist, but none has a service policy for this service',
  PERMISSION_NOT_GRANTED: 'the roles have a service policy for this service, but none lists this permission',
};

export async function explainCommand(args: string[]): Promise<number> {
  const { values } = parse(args, {
    token: { type: 'string' },
    service: { type: 'string' },
    permission: { type: 'string' },
    resource: { type: 'string' },
    node: { type: 'string' },
    iam: { type: 'string' },
  });
  const service = required(values.service, 'service');
  const permission = required(values.permission, 'permission');
  const iam = required(values.iam, 'iam');
  if ((values.resource === undefined) === (values.node === undefined)) throw new UsageError('give exactly one of --resource TYPE=value and --node ID');
  let resource: { type: string; value: string } | { node: string };
  if (values.resource !== undefined) {
    const eq = values.resource.indexOf('=');
    if (eq <= 0) throw new UsageError('--resource must be TYPE=value');
    resource = { type: values.resource.slice(0, eq), value: values.resource.slice(eq + 1) };
  } else {
    resource = { node: values.node ?? '' };
  }
  // Last: every usage error is reported before stdin is waited on.
  const token = await tokenFrom(values.token);

  const authorizer = createAuthorizer({ baseUrl: iam, tokenCache: false });
  try {
    const identity = await authorizer.authenticate(`Bearer ${token}`);
    const { claims } = identity;
    // Every claim is the token issuer's text, possibly hostile: printed through visible().
    console.log(`token    verified: sub ${visible(claims.sub)}, app ${visible(claims.app)}, tenant ${claims.aud === undefined ? '(none)' : visible(claims.aud)}, ${claims.ars.length} access reference(s)`);
    const decision = await authorizer.authorize(identity, { service, permission, resource });
    console.log(`decision ${decision.granted ? 'GRANTED' : 'DENIED'} — ${visible(permission)} on ${visible(service)} for ${visible(decision.reference)}`);
    console.log(`reason   ${decision.reason}: ${REASONS[decision.reason]}`);
    console.log(`roles    ${decision.roles.length > 0 ? list(decision.roles) : '(none for this resource)'}`);
    if (decision.grantedBy) console.log(`by       role ${visible(decision.grantedBy.role)}`);
    console.log(`policy   changeId ${decision.changeId === undefined ? '(not consulted: no role for this resource)' : visible(decision.changeId)}`);
    // What else the caller may do here: the question a UI asks to show or hide actions.
    const held = await authorizer.permissionsFor(identity, { service, resource });
    const heldText = held.map((h) => `${visible(h.permission)} (${list(h.roles)})`).join(', ');
    console.log(`held     ${held.length > 0 ? heldText : `(no permission of ${visible(service)} on this resource)`}`);
    // Not this caller's roles only: a permission no role of the application grants denies everyone.
    const ungranted = decision.granted ? undefined : authorizer.ungranted(claims.app, [{ service, permission }])?.[0];
    if (ungranted) console.log(`drift    ${describeUngranted(claims.app, ungranted)}`);
    return decision.granted ? 0 : 3;
  } catch (error) {
    if (error instanceof IamAuthzError) {
      // Messages quote claims (an issuer, an audience) JSON-quoted: escape what JSON leaves raw.
      console.error(`${error.code} (${error.status}): ${escapeUnsafe(error.message)}`);
      return 1;
    }
    throw error;
  } finally {
    await authorizer.close();
  }
}

/** "no role of app-1 grants vehicle-service WRTIE (did you mean WRITE?)". */
function describeUngranted(app: string, missing: UngrantedPermission): string {
  const hint = missing.didYouMean === undefined ? '' : ` (did you mean ${visible(missing.didYouMean)}?)`;
  const what = missing.serviceGranted ? `${visible(missing.service)} ${visible(missing.permission)}${hint}`
    : `${visible(missing.service)} ${visible(missing.permission)}: no role grants anything in service ${visible(missing.service)}${hint}`;
  return `no role of ${visible(app)} grants ${what}`;
}

function list(items: readonly string[]): string {
  return items.map(visible).join(', ');
}
