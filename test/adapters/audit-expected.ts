/**
 * The one application every framework's `auditRoutes` is tested on (test/adapters/audit-*.test.ts),
 * and the audit each must give of it, exactly:
 *
 * - `GET /vehicle/:vin` and `PUT /vehicle/:vin`: permission guards reading the VIN from the path;
 * - `GET /depots/:depotId`: a permission guard on a fixed resource (`{ node: () => 'N-ROOT' }`) — an
 *   object route that never checks the object;
 * - `GET /me`: `authenticate()` only; `GET /health`: `publicRoute()`; `GET /admin/export`: no guard;
 * - a sub-router mounted at `/fleet` with a group guard `authenticate()` (the framework's own way:
 *   `router.use`, `app.use('/fleet/*')`, a plugin hook, a class decorator), holding
 *   `GET /fleet/vehicles/:vin` (plus a permission guard of its own) and `GET /fleet/summary` (the
 *   group guard alone).
 */
import type { RouteAudit } from '../../src/adapter/index.js';

export const SERVICE = 'vehicle-service';

export const EXPECTED_AUDIT: RouteAudit = {
  routes: [
    { method: 'GET', path: '/admin/export', access: 'unguarded', permissions: [] },
    { method: 'GET', path: '/depots/{depotId}', access: 'permission', permissions: [{ service: SERVICE, permission: 'READ' }] },
    { method: 'GET', path: '/fleet/summary', access: 'authenticated', permissions: [] },
    { method: 'GET', path: '/fleet/vehicles/{vin}', access: 'permission', permissions: [{ service: SERVICE, permission: 'READ', resourceType: 'VIN' }] },
    { method: 'GET', path: '/health', access: 'public', permissions: [] },
    { method: 'GET', path: '/me', access: 'authenticated', permissions: [] },
    { method: 'GET', path: '/vehicle/{vin}', access: 'permission', permissions: [{ service: SERVICE, permission: 'READ', resourceType: 'VIN' }] },
    { method: 'PUT', path: '/vehicle/{vin}', access: 'permission', permissions: [{ service: SERVICE, permission: 'WRITE', resourceType: 'VIN' }] },
  ],
  findings: [
    { kind: 'unguarded', method: 'GET', path: '/admin/export', message: 'GET /admin/export has no guard and no public mark: guard it, or mark it public on purpose (publicRoute(), or @Public() in NestJS)' },
    { kind: 'unscoped-parameter', method: 'GET', path: '/depots/{depotId}', message: 'GET /depots/{depotId} has a parameter ({depotId}), but no permission guard on it takes its resource from the request: each names a fixed resource, so the object the request names is never checked' },
  ],
};
