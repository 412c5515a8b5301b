/**
 * Temporary: the sessions and their table moved to src/people (issue 33); no SQL is left here.
 * src/settings/linkedin, being moved out of settings on another branch, still imports Flash from
 * this path; delete this file once it imports src/people/session.types.ts. Nothing else imports it.
 */
export type { Flash } from '../../people/session.types';
