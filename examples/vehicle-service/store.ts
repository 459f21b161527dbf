/** The vehicle-service's in-memory data and server plumbing, shared by the Express, Koa and Fastify variants. */
import type { Server } from 'node:http';
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
