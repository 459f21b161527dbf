/**
 * Vitest global setup: the test signing keys are generated once per run (two 2048-bit RSA keys
 * cost ~100–300 ms each on this machine) and handed to every test file through `inject`, instead
 * of being generated again at the import of fixtures.ts in each file.
 */
import { generateKeyPairSync } from 'node:crypto';
import type { TestProject } from 'vitest/node';

/** Private JWKs, as `signingKeyFromJwk` takes them. */
export interface TestKeys {
  readonly key1: Record<string, unknown>;
  readonly key2: Record<string, unknown>;
}

declare module 'vitest' {
  export interface ProvidedContext {
    testKeys: TestKeys;
    /** Whether this run measures coverage (`--coverage`): V8's block counters then add allocations. */
    coverage: boolean;
  }
}

function privateJwk(kid: string): Record<string, unknown> {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { ...privateKey.export({ format: 'jwk' }), kid };
}

export default function setup(project: TestProject): void {
  // A fresh pair per run (never committed, never reused): the kids are fixed, the keys are not.
  project.provide('testKeys', { key1: privateJwk('key-1'), key2: privateJwk('key-2') });
  project.provide('coverage', project.config.coverage.enabled);
}
