/** The vehicle-service's in-memory data and server plumbing, shared by the Express, Koa and Fastify variants. */
import type { Server } from 'node:http';
import { IamAuthzError } from 'iam-authz';
import { toErrorResponse, type ErrorResponse } from 'iam-authz/adapter';
import type { AddressInfo } from 'node:net';

/** A started variant: where it listens, and how to stop it (and its authorizer). */
export interface RunningService {
  url: string;
  close(): Promise<void>;
}

export function runningService(server: Server, closeAuthorizer: () => Promise<void>): RunningService {
  const { address, port } = server.address() as AddressInfo;
  return {
    url: `http://${address}:${port}`,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => { resolve(); }));
      await closeAuthorizer();
    },
  };
}

export interface Vehicle {
  vin: string;
  model: string;
  color: string;
  updatedBy?: string;
}

export class VehicleStore {
  readonly #vehicles = new Map<string, Vehicle>([
    ['WVW1', { vin: 'WVW1', model: 'Golf', color: 'blue' }],
    ['WVW2', { vin: 'WVW2', model: 'Passat', color: 'grey' }],
  ]);

  get(vin: string): Vehicle | undefined {
    return this.#vehicles.get(vin);
  }

  /** The stored vehicles among `vins`, in that order (a VIN the caller may read but that is not stored is skipped). */
  list(vins: readonly string[]): Vehicle[] {
    return vins.flatMap((vin) => this.#vehicles.get(vin) ?? []);
  }

  /** Applies `model`/`color` from an untrusted body; unknown fields are ignored. */
  update(vin: string, body: unknown, updatedBy: string): Vehicle {
    const current = this.#vehicles.get(vin) ?? { vin, model: 'unknown', color: 'unknown' };
    const patch = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
    const next: Vehicle = {
      vin,
      model: typeof patch.model === 'string' ? patch.model : current.model,
      color: typeof patch.color === 'string' ? patch.color : current.color,
      updatedBy,
    };
    this.#vehicles.set(vin, next);
    return next;
  }
}

/** What `GET /vehicles` asks: the VINs the caller may READ, from its token (no call to the IAM). */
export const READABLE_VINS = { service: 'vehicle-service', permission: 'READ', type: 'VIN' } as const;

/** A 401/403/503 of the decision API as the guards answer it (problem+json, WWW-Authenticate or Retry-After). */
export function iamErrorAnswer(error: unknown): ErrorResponse | undefined {
  return error instanceof IamAuthzError ? toErrorResponse(error, { realm: 'vehicle-service', exposeDecision: false, retryAfterSec: 5 }) : undefined;
}
