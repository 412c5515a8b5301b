import { Inject, Injectable } from '@nestjs/common';
import type { AuthContext } from '../access/auth-context';
import { AuditService } from '../audit/audit.service';
import { conflict, invalidInput } from '../common/errors';
import { HERALD_CONFIG, HeraldConfig } from '../config/config';
import { MailOutbox } from '../mail/mail-outbox.service';
import { WorkspacesService } from '../workspaces/workspaces.service';
import { emailProblem, mailsLinks, nameProblem, normalizeEmail, passwordProblem } from './credentials';
import { expiryFrom, hashLinkToken, INVITATION_TTL_MS, newLinkToken } from './link-tokens';
import { PasswordHasher } from './password-hasher';
import { PeopleRepository } from './people.repository';
import { firstPersonMail } from './people-mail';
import { NewInvitationView, personLabel, PersonView, toInvitationView, toPersonView } from './person.types';

/**
 * How POST /v1/people (or the Team page's first-person form) ended: the person, made at once, or
 * the link that will make them once it is used (mailed; in the answer too without a mail server).
 */
export type FirstPersonOutcome = { created: PersonView } | { pending: NewInvitationView };

/**
 * A workspace's first person, an owner, made by whoever holds an owner key of it. Once a workspace
 * has people, others join by invitation.
 *
 * An address becomes a login only once its mailbox is proven: the first person is written as an
 * owner invitation holding the name and password hash the key holder chose, and its link goes to
 * the address; using it makes the person (PeopleService.acceptInvitation). So a workspace cannot
 * take another's address, nor one that another workspace will invite later (a pending first
 * person holds no address), and the answer is the same whether or not the address logs in
 * elsewhere: only the mailbox's owner learns that, on the page the link opens.
 *
 * Without a mail server there is no mailbox to prove anything with. The very first person of the
 * server is then made at once (someone has to be able to log in, and nobody else is there to take
 * an address from); any later first person is handed their link in the answer, as invitations
 * are on such a server: whoever runs a Herald without mail vouches for the links they hand over.
 */
@Injectable()
export class FirstPersonService {
  constructor(
    @Inject(HERALD_CONFIG) private readonly config: HeraldConfig,
    private readonly people: PeopleRepository,
    private readonly hasher: PasswordHasher,
    private readonly audit: AuditService,
    private readonly outbox: MailOutbox,
    private readonly workspaces: WorkspacesService,
  ) {}

  async createFirst(
    auth: AuthContext,
    input: { email: string; name: string; password: string },
    now = new Date(),
  ): Promise<FirstPersonOutcome> {
    const email = normalizeEmail(input.email);
    const name = input.name.trim();
    const problem = emailProblem(email) ?? nameProblem(name) ?? passwordProblem(input.password, email);
    if (problem) throw invalidInput(problem);
    // Hashed before any lock is taken: argon2id takes tens of milliseconds on purpose.
    const passwordHash = await this.hasher.hash(input.password);
    const token = newLinkToken();
    const link = `${this.config.publicUrl}/settings/invitation?token=${token}`;
    const workspace = await this.workspaces.find(auth.workspaceId);
    return this.people.transaction(async (tx): Promise<FirstPersonOutcome> => {
      await this.people.lockTeam(tx, auth.workspaceId);
      if ((await this.people.countActive(auth.workspaceId, tx)) > 0) {
        throw conflict('this workspace has people already: invite the next ones (POST /v1/invitations, or the Team page)');
      }
      if (!mailsLinks(this.config)) {
        await this.people.lockPeopleTable(tx);
        if (!(await this.people.anyPerson(tx))) {
          const person = await this.people.insert(tx, { workspaceId: auth.workspaceId, email, name, role: 'owner', passwordHash });
          await this.audit.record(tx, auth, {
            kind: 'person',
            action: 'create',
            subjectId: person.id,
            summary: `Added ${personLabel(person)} as the workspace's first person (owner), the server's first: no mail server to confirm the address with`,
            after: { email, name, role: 'owner' },
          });
          return { created: toPersonView(person) };
        }
      }
      // One first person waits at a time: adding another (a mistyped address) replaces the link.
      const replaced = await this.people.revokeOpenFirstPersons(tx, auth.workspaceId);
      await this.people.revokeOpenInvitation(tx, auth.workspaceId, email);
      const invitation = await this.people.insertInvitation(tx, {
        workspaceId: auth.workspaceId,
        email,
        role: 'owner',
        tokenHash: hashLinkToken(token),
        invitedBy: auth.label,
        inviter: auth.principal,
        expiresAt: expiryFrom(now, INVITATION_TTL_MS),
        firstPerson: { name, passwordHash },
      });
      const mail = firstPersonMail({
        workspaceName: workspace?.name ?? 'Herald',
        addedBy: auth.label,
        name,
        link,
        days: INVITATION_TTL_MS / 86_400_000,
      });
      await this.outbox.enqueue(tx, { workspaceId: auth.workspaceId, kind: 'invitation', recipients: [email], ...mail });
      await this.audit.record(tx, auth, {
        kind: 'invitation',
        action: 'create',
        subjectId: invitation.id,
        summary: `Added ${name} <${email}> as the workspace's first person (owner), a login once its link confirms the address`,
        ...(replaced.length > 0 ? { before: { waiting: replaced } } : {}),
        after: { email, name, role: 'owner', firstPerson: true, expiresAt: invitation.expiresAt.toISOString() },
      });
      const mailed = mailsLinks(this.config);
      return { pending: { invitation: toInvitationView(invitation, now), mailed, link: mailed ? null : link } };
    });
  }
}
