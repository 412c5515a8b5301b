/**
 * Temporary: the sessions moved to src/people (issue 33). src/settings/linkedin and
 * src/settings/bluesky, which are being moved out of settings on another branch, still import
 * this path; delete this file once they import src/people/sessions.service.ts and
 * src/people/session.types.ts. Nothing else imports it.
 */
export { SessionsService } from '../../people/sessions.service';
export type { PageSession } from '../../people/session.types';
