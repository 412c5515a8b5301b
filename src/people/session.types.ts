import type { AuthContext } from '../access/auth-context';

/** A message for the next page a session sees (post/redirect/get). Never holds a secret. */
export interface Flash {
  tone: 'success' | 'error' | 'info';
  text: string;
  /** An optional follow-up: a link, or a button that posts to `action` (with the CSRF token). */
  followUp?: { label: string; href: string } | { label: string; action: string };
}

/** A live session of the settings page, as SessionsService hands it to the page. */
export interface PageSession {
  id: string;
  csrfToken: string;
  flash: Flash | null;
  auth: AuthContext;
}
