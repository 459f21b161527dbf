/**
 * Finds, in a running Nest application, the handlers the decorators protect (controllers, GraphQL
 * resolvers, gateways): the module makes their guards before any request, and a wiring the guard
 * cannot reach stops the start-up with an error naming them instead of serving them unchecked.
 */
import { MetadataScanner, type ModulesContainer } from '@nestjs/core';
import { requirementOf, type IamRequirement } from './metadata.js';

/** One handler (a method of a controller, resolver or gateway) with a requirement other than `@Public()`. */
export interface ProtectedHandler {
  /** `Class.method`. */
  readonly name: string;
  readonly type: abstract new (...args: never[]) => unknown;
  readonly method: string;
  /** The method itself, where frameworks keep their own metadata. */
  readonly handler: object;
  /** What the decorators recorded (the handler's, else its class's). */
  readonly requirement: IamRequirement;
}

const scanner = new MetadataScanner();

/** Every method, in every module's controllers and providers, that a decorator protects. */
export function protectedHandlers(modules: ModulesContainer): ProtectedHandler[] {
  const found: ProtectedHandler[] = [];
  const seen = new Set<unknown>();
  for (const module of modules.values()) {
    for (const wrapper of [...module.controllers.values(), ...module.providers.values()]) {
      const instance: unknown = wrapper.instance;
      if (typeof instance !== 'object' || instance === null) continue;
      const prototype = Object.getPrototypeOf(instance) as object | null;
      if (prototype === null || prototype === Object.prototype || seen.has(prototype)) continue;
      seen.add(prototype);
      const type = prototype.constructor as ProtectedHandler['type'];
      for (const method of scanner.getAllMethodNames(prototype)) {
        const handler = (prototype as Record<string, unknown>)[method];
        if (typeof handler !== 'function') continue;
        const requirement = requirementOf(type, handler);
        if (requirement !== undefined && requirement.kind !== 'public') found.push({ name: `${type.name}.${method}`, type, method, handler, requirement });
      }
    }
  }
  return found;
}

/** "A.b, C.d and 3 more". */
export function listNames(names: readonly string[], max = 5): string {
  const shown = names.slice(0, max).join(', ');
  return names.length > max ? `${shown} and ${names.length - max} more` : shown;
}

/**
 * Without `IamAuthzModule` nothing can check a request: the start-up error `IamGuard` throws,
 * naming what the decorators (or `@UseGuards(IamGuard)`) meant to protect.
 */
export function moduleMissingError(modules: ModulesContainer): Error {
  const names = protectedHandlers(modules).map((h) => h.name);
  return new Error(`IamGuard: IamAuthzModule is not imported, so nothing checks ${names.length > 0 ? listNames(names) : 'the handlers guarded by IamGuard'}; `
    + 'import IamAuthzModule.forRoot(options) or IamAuthzModule.forRootAsync(options) in the application module');
}
