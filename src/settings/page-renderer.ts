import { Inject, Injectable } from '@nestjs/common';
import type { Response } from 'express';
import { allows } from '../access/roles';
import { HERALD_CONFIG, HeraldConfig } from '../config/config';
import { linkedInVersionNotice } from '../config/linkedin-versions';
import type { Flash, PageSession } from '../people/session.types';
import { SessionsService } from '../people/sessions.service';
import { Asset, loadAssets, settingsDir } from './settings-views';

export type Section =
  | 'accounts'
  | 'failed'
  | 'posts'
  | 'approvals'
  | 'compose'
  | 'import'
  | 'calendar'
  | 'queue'
  | 'notifications'
  | 'team'
  | 'activity'
  | 'events'
  | 'profile'
  | null;

/** What every page's layout needs besides the page's own data. */
interface LayoutModel {
  title: string;
  section: Section;
  session: { csrf: string } | null;
  /** What the session's role allows (route-permissions.ts): buttons a role cannot use are not shown. */
  can: { edit: boolean; own: boolean };
  /** Who is logged in, for the header. */
  me: { label: string; role: string; person: boolean } | null;
  flash: Flash | null;
  /** For owners: the configured LinkedIn API version is near or past its sunset (linkedin-versions.ts). */
  versionWarning: string | null;
  css: string;
  js: string;
}

/**
 * Renders the page's templates with the layout's data: the section for the navigation, the
 * CSRF token for every form, the flash message of the last action (shown once), the asset URLs.
 */
@Injectable()
export class PageRenderer {
  readonly dir = settingsDir();
  readonly assets: Map<string, Asset> = loadAssets(this.dir);

  constructor(
    @Inject(HERALD_CONFIG) private readonly config: HeraldConfig,
    private readonly sessions: SessionsService,
  ) {}

  async render(
    res: Response,
    view: string,
    page: { title: string; section: Section; session: PageSession | null; status?: number },
    data: Record<string, unknown> = {},
  ): Promise<void> {
    const flash = page.session?.flash ?? null;
    const auth = page.session?.auth ?? null;
    if (page.session) await this.sessions.consumeFlash(page.session);
    const layout: LayoutModel = {
      title: page.title,
      section: page.section,
      session: page.session ? { csrf: page.session.csrfToken } : null,
      can: { edit: auth ? allows(auth, 'edit') : false, own: auth ? allows(auth, 'own') : false },
      me: auth ? { label: auth.label, role: auth.role, person: auth.principal.kind === 'person' } : null,
      flash,
      versionWarning:
        auth && allows(auth, 'own') ? (linkedInVersionNotice(this.config.linkedin.apiVersion, new Date())?.message ?? null) : null,
      css: this.assets.get('settings.css')!.url,
      js: this.assets.get('settings.js')!.url,
    };
    // Pages show account names, post texts and error messages: never cache them.
    res.setHeader('Cache-Control', 'no-store');
    res.status(page.status ?? 200).render(view, { ...data, ...layout, [`nav_${page.section ?? 'none'}`]: true });
  }

  /** Post/redirect/get: a message for the next page, then a 303 to it. */
  async redirect(res: Response, session: PageSession, to: string, flash?: Flash): Promise<void> {
    if (flash) await this.sessions.flash(session, flash);
    res.redirect(303, to);
  }
}
