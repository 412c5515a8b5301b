/**
 * The caller's context and the route markers live in src/access (below every module that uses
 * them); they are re-exported here, where the controllers have always imported them from.
 */
export { Auth, IS_PUBLIC, Public } from '../access/auth-context';
export type { AuthContext, AuthenticatedRequest, Principal } from '../access/auth-context';
