/**
 * For watch.test.ts: an authorizer over the IAM at argv[2], a watch on the token argv[3], closed;
 * then nothing — the process must exit by itself (no timer, socket or listener left holding it).
 */
import { createAuthorizer } from '../../src/index.js';

const [baseUrl, token] = process.argv.slice(2) as [string, string];
const authorizer = createAuthorizer({ baseUrl });
const identity = await authorizer.authenticate(`Bearer ${token}`);
const watch = await authorizer.watch(identity, { service: 'vehicle-service', permission: 'READ', resource: { type: 'VIN', value: 'WVW1' } });
watch.close();
console.log('watched, closed');
