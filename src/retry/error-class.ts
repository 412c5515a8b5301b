/**
 * The five outcome classes (docs/delivery.md "Classifying an outcome"). Every attempt's result (an HTTP status, a network error,
 * or a payload that could not be built) is mapped onto exactly one of them before the retry
 * policy and the circuit breaker look at it; connectors translate their platform's own signals
 * (Bluesky `400 ExpiredToken`, LinkedIn `422 DUPLICATE_POST`, ...) into these classes first.
 *
 * - `success`: delivered.
 * - `transient`: the receiver (or the path to it) is unhealthy right now; retry with backoff.
 * - `auth`: the credentials are no longer accepted; retrying cannot help until a person re-auths.
 * - `permanent`: the receiver understood and refused this request; retrying sends the same refusal.
 * - `poison`: Herald could not even build or sign the payload; nothing was sent.
 */
export type ErrorClass = 'success' | 'transient' | 'auth' | 'permanent' | 'poison';
