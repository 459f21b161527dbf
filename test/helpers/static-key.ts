/**
 * A fixed RSA key for tests that must not spend a 2048-bit key generation at import (the policy,
 * engine and token-client tests; fixtures.ts generates two per file). Test-only: it signs tokens
 * for loopback tests and is trusted by nothing else.
 */
import { signingKeyFromJwk, type SigningKey } from '../../packages/iam-authz-dev/src/sign-jwt.js';

export const STATIC_KEY: SigningKey = signingKeyFromJwk({
  kty: 'RSA',
  n: '2BtUqQ4Ldr-BAzoa8vzyE69c68_7fNULNWHbuImuCkTVJpXD4OcXXW1xhX6bRwjA4dWI0Zk9NqokNiS_aVVbbzfynG_VwqpyABUwJBTHLmKi1RxL3M2bcxQHyff34Ab9OWsscimJr32ZU86OA0AQY1HUs9vAi7BilcOQlwN1m6BqghBvCXwlQmEJ5pW9b3ORcwAnVlZ9KHdzKNiKoVU09U3dI6EGA4DS_sXdRUbWUO1QoloomNnG51piiT79UDxX0flF3C109S5pRDSMN9lOJclNQai_5YBNROFSCSD-gZAmzMepGJpCBybL-wDkqaHwjjpZHi-SFfkozEC3cN4i4Q',
  e: 'AQAB',
  d: 'BNPXeE9QAj8U6rWJlJQB9F6efMYQoCFCNtcQyXaJ5MDU4h_GWGfRJc0kFA9X-KZBaMoUXFpH-8ihNnRrsjat7DYbvVLiO48DLO1MPgIY0PhzGr-fEjelmVSBOAnKB78gOQAj5gj3gmwT2MNseLYdp5pUXhAypOwzx5SuzjDNl8RbGmonTj17-8AN2qpu_7HMl7dxhQBD-35u84SsfjuCfvEwPeBdbgDv9l7WZoIiiyMkH8sjCB-U72Ibyb3cWagQgEHy2F_h87YvvpRQb9piUAqEqVOiRJCryjIBaE54JnIcqabNfJ7kQDPV255oj238FjNOC4yHQlJ4wT8d7y5iYQ',
  p: '7Wx2_KqGsVOLgFrIN-D2gWAKbfCjyzUVodOWVJpTVMr8kU1hXRLz0SPak3O-ZVCre3mXrwIs54b6mmSZB1nODnPjL-xtsgAL3wTQOQ4-S9_bKXqJbQb4iyvIYqBnT8Ji5-TDcaS_gzCv49Ewfkv0Z5Km1I-Nuo6orW1TLhBxrLM',
  q: '6QPkr9qfuw-zrtdLIdywEptY1JklO8j-EVdsLSAv6YdmbCzf9MQSQlNvWaurOuutrXoGhwHvIrR5znblPspK78f5kKJVCaxeFrQwvMAxtk7gui_9HxMsxGUGHpFQr0lF4eubcwHHAiTJyBV7vBPKTBkPRzSm8k8OMfo6nqhpZBs',
  dp: 'nYJ1tc4TqZS5WZ_gcGHIZ7AleyZII8nF3iQW-W2glwJLaMIjM7IdGsRkf6orx98qxLG4FZyl2bvMiZzvgNbtQt1S_Tom1A3_0ibJVPDEF2YdaXknrrMPNJUJTZUItPtKznkPyFb5zrkAF21ydHdDX2sFTsMlzXxTHysGIes63s0',
  dq: 'fUUjj8sILofdgLSr5rN_UTGFCx6eHssKlAYc2RHB0FmDncpuSGeUrWWvqlSZRJ7piybcFX7bshu2lGHlEuGsccZfi_tJnl61Yp1SylbFIw660D32ZdtoKNlq9coHx4Sr9i41LxoYhDWE6XVrRQyaqFiclxpeWkxYBFRTaXJ-3ls',
  qi: 'vVXvBfv_v3oa0fu05PCUNoiwU4QvCNNCEtYJEe3zkTgn37_ckji1wqy9ktIerIn-kkkHo4UVC61fdQUXdtz0XtG3P8f5LzzUfXxOqoeFOjM8CMfGpRq4WGYVd7gEDKKDi1eRH0OhZ1atQWpJE3__hOPdLkZDd-a1b3rb4XhytF8',
  kid: 'policy-test-key',
});
