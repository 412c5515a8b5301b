import { Body, Controller, Get, Param, Post, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { isRole, ROLES } from '../access/roles';
import { ParseIdPipe } from '../common/parse-id.pipe';
import { MAX_PAGE_SIZE } from '../common/pagination';
import { FirstPersonService } from '../people/first-person.service';
import { PeopleService } from '../people/people.service';
import { Public } from '../workspaces/auth';
import { FormProblem, personMessage } from './form-validation';
import { PageExceptionFilter } from './page-exception.filter';
import { field, rawField } from './page-input';
import { PageRenderer } from './page-renderer';
import { PageRequest, requirePage } from './session/page-request';
import { PageSessionGuard } from './session/page-session.guard';
import type { PageSession } from '../people/session.types';

const personId = new ParseIdPipe('person');
const ROLE_HELP = [
  { value: 'viewer', label: 'Viewer: reads everything, changes nothing' },
  { value: 'editor', label: 'Editor: accounts, posts and failed posts' },
  { value: 'owner', label: 'Owner: everything, people and keys included' },
];

/**
 * The Team page: the workspace's people and open invitations for everyone; for owners, the forms
 * to add the first person (while there is none), invite, change roles, send a password-reset
 * link and remove. Every change goes through PeopleService (the API's rules and audit).
 */
@ApiExcludeController()
@Public()
@UseGuards(PageSessionGuard)
@UseFilters(PageExceptionFilter)
@Controller('settings/team')
export class TeamPageController {
  constructor(
    private readonly pages: PageRenderer,
    private readonly people: PeopleService,
    private readonly firstPersons: FirstPersonService,
  ) {}

  @Get()
  async show(@Req() req: PageRequest, @Res() res: Response): Promise<void> {
    await this.render(res, requirePage(req), {});
  }

  private async render(
    res: Response,
    session: PageSession,
    extra: {
      error?: string;
      status?: number;
      values?: Record<string, string>;
      newLink?: { email: string; link: string; firstPerson?: boolean };
    },
  ): Promise<void> {
    const ws = session.auth.workspaceId;
    const [people, invitations] = await Promise.all([this.people.list(ws, MAX_PAGE_SIZE), this.people.listInvitations(ws, MAX_PAGE_SIZE)]);
    const me = session.auth.principal;
    await this.pages.render(
      res,
      'team',
      { title: 'Team', section: 'team', session, status: extra.error ? (extra.status ?? 400) : 200 },
      {
        people: people.data.map((p) => ({
          ...p,
          isMe: me.kind === 'person' && me.id === p.id,
          roleOptions: ROLES.map((r) => ({ value: r, selected: r === p.role })),
        })),
        noPeople: people.data.length === 0,
        invitations: invitations.data,
        roleHelp: ROLE_HELP.map((r) => ({ ...r, selected: r.value === (extra.values?.role ?? 'editor') })),
        values: extra.values ?? {},
        error: extra.error,
        newLink: extra.newLink,
        mailsLinks: this.people.mailsLinks,
      },
    );
  }

  private async refused(res: Response, session: PageSession, err: unknown, values: Record<string, string> = {}): Promise<void> {
    const known = personMessage(err);
    if (!known) throw err;
    await this.render(res, session, { error: known.message, status: known.status, values });
  }

  /**
   * The first person of the workspace, made by whoever is logged in with an owner key: a login
   * once the link sent to the address is used (FirstPersonService), or at once for the very first
   * person of a server without mail.
   */
  @Post('first-person')
  async firstPerson(@Req() req: PageRequest, @Res() res: Response, @Body() body: Record<string, unknown>): Promise<void> {
    const session = requirePage(req);
    const values = { email: field(body, 'email'), name: field(body, 'name') };
    try {
      const password = rawField(body, 'password');
      if (password !== rawField(body, 'confirm')) throw new FormProblem('the two passwords are not the same');
      const outcome = await this.firstPersons.createFirst(session.auth, { ...values, password });
      if ('created' in outcome) {
        const person = outcome.created;
        await this.pages.redirect(res, session, '/settings/team', {
          tone: 'success',
          text: `${person.name} is the workspace's first person, an owner: they log in with ${person.email} and the password you chose.`,
        });
        return;
      }
      const { invitation, link } = outcome.pending;
      if (link) {
        // No mail server: the link is shown this once, for the key holder to pass on.
        await this.render(res, session, { newLink: { email: invitation.email, link, firstPerson: true } });
        return;
      }
      await this.pages.redirect(res, session, '/settings/team', {
        tone: 'success',
        text: `A confirmation link is on its way to ${invitation.email} (it works once, for 7 days): once it is used, they log in with that address and the password you chose.`,
      });
    } catch (err) {
      await this.refused(res, session, err, values);
    }
  }

  @Post('invitations')
  async invite(@Req() req: PageRequest, @Res() res: Response, @Body() body: Record<string, unknown>): Promise<void> {
    const session = requirePage(req);
    const values = { inviteEmail: field(body, 'email'), role: field(body, 'role') };
    try {
      const role = values.role;
      if (!isRole(role)) throw new FormProblem('choose a role: viewer, editor or owner');
      const created = await this.people.invite(session.auth, { email: values.inviteEmail, role });
      if (created.link) {
        // No mail server: the link is shown this once, for the owner to pass on.
        await this.render(res, session, { newLink: { email: created.invitation.email, link: created.link } });
        return;
      }
      await this.pages.redirect(res, session, '/settings/team', {
        tone: 'success',
        text: `${created.invitation.email} is invited as ${role}: the link is in their mail, valid 7 days.`,
      });
    } catch (err) {
      await this.refused(res, session, err, values);
    }
  }

  @Post('invitations/:id/revoke')
  async revokeInvitation(
    @Req() req: PageRequest,
    @Res() res: Response,
    @Param('id', new ParseIdPipe('invitation')) id: string,
  ): Promise<void> {
    const session = requirePage(req);
    try {
      await this.people.revokeInvitation(session.auth, id);
      await this.pages.redirect(res, session, '/settings/team', {
        tone: 'info',
        text: 'The invitation is withdrawn: its link no longer works.',
      });
    } catch (err) {
      await this.refused(res, session, err);
    }
  }

  @Post('people/:id/role')
  async role(
    @Req() req: PageRequest,
    @Res() res: Response,
    @Param('id', personId) id: string,
    @Body() body: Record<string, unknown>,
  ): Promise<void> {
    const session = requirePage(req);
    try {
      const role = field(body, 'role');
      if (!isRole(role)) throw new FormProblem('choose a role: viewer, editor or owner');
      const person = await this.people.update(session.auth, id, { role });
      await this.pages.redirect(res, session, '/settings/team', { tone: 'success', text: `${person.name} is now ${person.role}.` });
    } catch (err) {
      await this.refused(res, session, err);
    }
  }

  @Post('people/:id/reset')
  async reset(@Req() req: PageRequest, @Res() res: Response, @Param('id', personId) id: string): Promise<void> {
    const session = requirePage(req);
    try {
      const sent = await this.people.sendReset(session.auth, id);
      await this.pages.redirect(res, session, '/settings/team', {
        tone: 'success',
        text: sent.mailed
          ? 'A password-reset link is on its way to them (valid one hour).'
          : 'A password-reset link was written to the mail outbox (no mail server is configured): the operator finds it there.',
      });
    } catch (err) {
      await this.refused(res, session, err);
    }
  }

  @Get('people/:id/remove')
  async removeForm(@Req() req: PageRequest, @Res() res: Response, @Param('id', personId) id: string): Promise<void> {
    const session = requirePage(req);
    const person = await this.people.get(session.auth.workspaceId, id);
    await this.pages.render(res, 'person-remove', { title: `Remove ${person.name}`, section: 'team', session }, { person });
  }

  @Post('people/:id/remove')
  async remove(@Req() req: PageRequest, @Res() res: Response, @Param('id', personId) id: string): Promise<void> {
    const session = requirePage(req);
    try {
      await this.people.remove(session.auth, id);
      await this.pages.redirect(res, session, '/settings/team', {
        tone: 'info',
        text: 'Removed: they can no longer log in, and their open pages have ended.',
      });
    } catch (err) {
      await this.refused(res, session, err);
    }
  }
}
