import { Inject, Injectable, Logger } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import type { AuthContext, Principal } from '../access/auth-context';
import { AuditService } from '../audit/audit.service';
import { HERALD_CONFIG, HeraldConfig } from '../config/config';
import type { Sql } from '../database/db';
import type { EmbeddedRead, SqlPiece } from '../database/statement';
import type { Role } from '../access/roles';
import { MailOutbox } from '../mail/mail-outbox.service';
import { approvalMailAllowed, dayBefore } from '../notifications/mail-limits';
import { PeopleService } from '../people/people.service';
import { WorkspacesService } from '../workspaces/workspaces.service';
import { decisionMail, waitingMail } from './approval-mail';
import { APPROVAL_MODES, ApprovalMode, ApprovalSettings, DEFAULT_APPROVAL_SETTINGS, needsApproval } from './approval-policy';
import { ApprovalPolicyRepository, ApprovalStepKind, ApprovalStepRow, StepActor } from './approval-policy.repository';
import { EventsService } from '../events/events.service';

export type { ApprovalStepKind, ApprovalStepRow, StepActor } from './approval-policy.repository';

/** The event each approval step sends (docs/events.md); an expiry sends none (the post stays as it was). */
const STEP_EVENTS: Record<ApprovalStepKind, 'post.approval_requested' | 'post.approved' | 'post.rejected' | null> = {
  submitted: 'post.approval_requested',
  resubmitted: 'post.approval_requested',
  approved: 'post.approved',
  rejected: 'post.rejected',
  expired: null,
};

/** A step as GET /v1/posts/{id}/approvals shows it. */
export interface ApprovalDecisionView {
  id: string;
  step: ApprovalStepKind;
  comment: string | null;
  by: StepActor;
  at: string;
}

export function toDecisionView(r: ApprovalStepRow): ApprovalDecisionView {
  return { id: r.id, step: r.step, comment: r.comment, by: r.actor, at: r.createdAt.toISOString() };
}

/** A caller of the API or the page as an approval step names it. */
export function stepActorOf(auth: Pick<AuthContext, 'principal' | 'label'>): StepActor {
  return { kind: auth.principal.kind, id: auth.principal.id, label: auth.label };
}

/**
 * The approval policy of a workspace and the record of each post's approval steps, with the
 * mails they send (docs/api.md "Approvals"). Steps and mails are written in the caller's
 * transaction (the one that changes the post), so a step, its mail and the post's new state
 * commit together or not at all. Mails go through the mail outbox and count against the
 * workspace's daily limit of approval mails (notifications/mail-limits.ts): beyond it the step
 * is recorded and the mail left out.
 */
@Injectable()
export class ApprovalPolicyService {
  private readonly logger = new Logger('Approvals');
  /** The last `requiredRead` per workspace and role (`lastSaidRequired`). */
  private readonly lastRequired = new LRUCache<string, boolean>({ max: 10_000 });

  constructor(
    @Inject(HERALD_CONFIG) private readonly config: HeraldConfig,
    private readonly repo: ApprovalPolicyRepository,
    private readonly audit: AuditService,
    private readonly outbox: MailOutbox,
    private readonly people: PeopleService,
    private readonly workspaces: WorkspacesService,
    private readonly events: EventsService,
  ) {}

  settings(workspaceId: string, q?: Sql): Promise<ApprovalSettings> {
    return this.repo.settings(workspaceId, q);
  }

  /** PUT /v1/settings/approvals (owners), audited with the values before and after. */
  async updateSettings(auth: AuthContext, next: ApprovalSettings): Promise<ApprovalSettings> {
    await this.repo.transaction(async (tx) => {
      const before = await this.repo.saveSettings(tx, auth.workspaceId, next);
      if (before.mode !== next.mode || before.clientApproval !== next.clientApproval) {
        await this.audit.record(tx, auth, {
          kind: 'workspace',
          action: 'approvals',
          subjectId: auth.workspaceId,
          summary: `Set the approval mode to ${next.mode}${next.clientApproval ? ', client approval counts' : ''}`,
          before: { ...before },
          after: { ...next },
        });
      }
    });
    return { ...next };
  }

  /** Would a post made or edited by `auth` need approval now? Read in `q` (the post's transaction) when given. */
  async required(auth: Pick<AuthContext, 'workspaceId' | 'role'>, q?: Sql): Promise<boolean> {
    return needsApproval((await this.repo.settings(auth.workspaceId, q)).mode, auth.role);
  }

  /**
   * `required` as a read the caller's own statement carries (database/statement.ts EmbeddedRead):
   * the intake reads the target accounts and the approval mode in one round trip. Autocommit, as
   * `required` without `q` is: a mode changed after the read applies to the next post.
   */
  requiredRead(auth: Pick<AuthContext, 'workspaceId' | 'role'>): ApprovalRequiredRead {
    return new ApprovalRequiredRead(this.repo.modePiece(auth.workspaceId), auth.role, (required) =>
      this.lastRequired.set(`${auth.workspaceId}/${auth.role}`, required),
    );
  }

  /**
   * Did the last `requiredRead` of this process for this workspace and role say that a post
   * needs approval? A hint, never a decision: the intake then reads the mode before it writes
   * rather than writing on `notRequiredPiece` and being refused on every post (a stale "yes"
   * costs the read it would have made anyway; a "no" is checked by the statement).
   */
  lastSaidRequired(auth: Pick<AuthContext, 'workspaceId' | 'role'>): boolean {
    return this.lastRequired.get(`${auth.workspaceId}/${auth.role}`) === true;
  }

  /**
   * A boolean piece for the caller's own statement: true while a post by `auth` needs no approval
   * (its mode is none of those `needsApproval` asks it under). The intake writes a post on it
   * without reading the mode first: under a mode that asks for approval the statement writes
   * nothing, and the post is decided again with `requiredRead`.
   */
  notRequiredPiece(auth: Pick<AuthContext, 'workspaceId' | 'role'>): SqlPiece {
    return this.repo.modeNotIn(
      auth.workspaceId,
      APPROVAL_MODES.filter((mode) => needsApproval(mode, auth.role)),
    );
  }

  /** A step of a post's approval, in the post's transaction. */
  async recordStep(
    q: Sql,
    s: { workspaceId: string; postId: string; step: ApprovalStepKind; comment: string | null; actor: StepActor },
  ): Promise<ApprovalStepRow> {
    const row = await this.repo.insertStep(q, s);
    // The step's event for the workspace's event endpoints, committed with it (docs/events.md).
    const type = STEP_EVENTS[s.step];
    if (type) {
      await this.events.approval(q, type, {
        workspaceId: s.workspaceId,
        postId: s.postId,
        actor: s.actor,
        comment: s.comment,
        now: row.createdAt,
      });
    }
    return row;
  }

  /**
   * The hook where a post would be scheduled and needs approval instead (the posts module calls it
   * in the transaction that makes the post wait): the step, the owners' mail, the audit entry.
   */
  async hold(q: Sql, auth: AuthContext, f: { postId: string; text: string; step: 'submitted' | 'resubmitted' }): Promise<void> {
    const actor = stepActorOf(auth);
    await this.recordStep(q, { workspaceId: auth.workspaceId, postId: f.postId, step: f.step, comment: null, actor });
    await this.mailOwners(q, { workspaceId: auth.workspaceId, author: actor, text: f.text, resubmitted: f.step === 'resubmitted' });
    await this.audit.record(q, auth, {
      kind: 'post',
      action: f.step === 'submitted' ? 'submit' : 'approval_needed_again',
      subjectId: f.postId,
      summary:
        f.step === 'submitted'
          ? `Submitted the post “${shortText(f.text)}” for approval`
          : `The post “${shortText(f.text)}” was edited after its approval: it needs approval again (its jobs were removed)`,
    });
  }

  /** GET /v1/posts/{id}/approvals: the post's steps, oldest first. */
  async history(workspaceId: string, postId: string): Promise<ApprovalDecisionView[]> {
    return (await this.repo.steps(workspaceId, postId)).map(toDecisionView);
  }

  /** Each post's latest step (the page shows the rejection comment of a draft sent back). */
  async latest(workspaceId: string, postIds: string[]): Promise<Map<string, ApprovalDecisionView>> {
    return new Map((await this.repo.latestSteps(workspaceId, postIds)).map((r) => [r.postId, toDecisionView(r)]));
  }

  /**
   * Who asked for the approval the post waits for (the last submitted/resubmitted step), as a
   * principal; null when no step says (a reviewer cannot submit).
   */
  async author(q: Sql, workspaceId: string, postId: string): Promise<Principal | null> {
    const steps = await this.repo.steps(workspaceId, postId, q);
    const last = [...steps].reverse().find((s) => s.step === 'submitted' || s.step === 'resubmitted');
    if (!last || last.actor.kind === 'reviewer') return null;
    return { kind: last.actor.kind, id: last.actor.id };
  }

  /** The owners are told a post waits (its author left out); in `q`. Returns how many were mailed. */
  async mailOwners(q: Sql, f: { workspaceId: string; author: StepActor; text: string; resubmitted: boolean }): Promise<number> {
    const owners = (await this.people.owners(f.workspaceId, q)).filter((o) => !(f.author.kind === 'person' && f.author.id === o.id));
    if (owners.length === 0) return 0;
    if (!(await this.withinLimit(q, f.workspaceId))) return 0;
    const workspace = await this.workspaces.find(f.workspaceId);
    const mail = waitingMail({
      workspaceName: workspace?.name ?? 'your workspace',
      author: f.author.label,
      text: f.text,
      resubmitted: f.resubmitted,
      publicUrl: this.config.publicUrl,
    });
    await this.outbox.enqueue(q, { workspaceId: f.workspaceId, kind: 'approval', recipients: owners.map((o) => o.email), ...mail });
    return owners.length;
  }

  /** The author (a person still in the workspace) is told the decision; in `q`. True when mailed. */
  async mailAuthor(
    q: Sql,
    f: {
      workspaceId: string;
      author: Principal | null;
      decision: 'approved' | 'rejected' | 'expired';
      by: StepActor;
      text: string;
      comment: string | null;
    },
  ): Promise<boolean> {
    if (f.author === null || f.author.kind !== 'person') return false;
    const person = await this.people.findActive(f.workspaceId, f.author.id, q);
    if (!person) return false;
    if (!(await this.withinLimit(q, f.workspaceId))) return false;
    const workspace = await this.workspaces.find(f.workspaceId);
    const mail = decisionMail({
      workspaceName: workspace?.name ?? 'your workspace',
      decision: f.decision,
      by: f.by.label,
      text: f.text,
      comment: f.comment,
      publicUrl: this.config.publicUrl,
    });
    await this.outbox.enqueue(q, { workspaceId: f.workspaceId, kind: 'approval', recipients: [person.email], ...mail });
    return true;
  }

  /** The workspace's daily limit of approval mails (counted in `q`, which holds the post's lock). */
  private async withinLimit(q: Sql, workspaceId: string): Promise<boolean> {
    const mailed = await this.outbox.countSince(q, workspaceId, 'approval', dayBefore(new Date()));
    if (approvalMailAllowed(mailed)) return true;
    this.logger.warn(`workspace ${workspaceId}: the daily limit of approval mails is reached; the step is recorded without a mail`);
    return false;
  }
}

function shortText(text: string): string {
  const chars = [...text.replace(/\s+/g, ' ').trim()];
  return chars.length > 60 ? `${chars.slice(0, 60).join('')}…` : chars.join('');
}

/** Whether a post needs approval, once the statement carrying the read answered (null before). */
export class ApprovalRequiredRead implements EmbeddedRead {
  readonly name = 'approval';
  required: boolean | null = null;

  constructor(
    readonly piece: SqlPiece,
    private readonly role: Role,
    private readonly onTaken: (required: boolean) => void = () => undefined,
  ) {}

  take(value: unknown): void {
    this.required = needsApproval(typeof value === 'string' ? (value as ApprovalMode) : DEFAULT_APPROVAL_SETTINGS.mode, this.role);
    this.onTaken(this.required);
  }
}
