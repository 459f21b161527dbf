/** Assertions on errors, shared by the tests: the authorizer's (JWKS, policy) and synchronous throws. */
import { expect } from 'vitest';
import { IamAuthzError, type IamAuthzErrorCode } from '../../src/index.js';

/** Asserts that `promise` rejects with an {@link IamAuthzError} of exactly this code and status. */
export async function expectAuthzError(promise: Promise<unknown>, code: IamAuthzErrorCode, status: number): Promise<IamAuthzError> {
  const error: unknown = await promise.then(
    () => { throw new Error(`expected rejection with ${code}, but it resolved`); },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(IamAuthzError);
  expect(error).toMatchObject({ code, status });
  return error as IamAuthzError;
}

/** Reason recorded for the failure behind a 503 (`UpstreamError.reason`). */
export function upstreamReason(error: IamAuthzError): unknown {
  return (error.cause as { reason?: unknown } | undefined)?.reason;
}

/** The error `run` throws synchronously; fails the test when it returns instead. */
export function thrownBy(run: () => unknown): Error & { code?: string } {
  try {
    run();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a throw, but it returned');
}
