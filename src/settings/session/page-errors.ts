/** Thrown by the session guard; the page filter turns them into a redirect or an error page. */
export class LoginRequired extends Error {
  constructor(readonly next: string | null) {
    super('login required');
  }
}

export class CsrfRefused extends Error {
  constructor() {
    super(
      'The form could not be accepted: it was not sent from this page, or it is older than your session. Nothing was changed. Go back, reload the page and try again.',
    );
  }
}

/** The session's role does not allow this page or form (src/access/route-permissions.ts). */
export class RoleRefused extends Error {
  constructor(
    readonly who: string,
    role: string,
  ) {
    super(`Only ${who} may do this; you are logged in as ${role}. Nothing was changed.`);
  }
}
