import { Injectable } from '@nestjs/common';
import type { AuthContext } from '../access/auth-context';
import { decodeCursor, DEFAULT_PAGE_SIZE, Page, toPage } from '../common/pagination';
import type { Sql } from '../database/db';
import type { Cte } from '../database/statement';
import { AuditFilter, AuditRepository } from './audit.repository';
import { actorOf, AuditActor, AuditEventView, NewAuditEntry, toAuditEventView } from './audit.types';

/**
 * The audit trail: who changed what, when. Every module that changes something a person would
 * ask about ("who disabled this account?") records it here, in the transaction of the change
 * where it has one. Entries never hold a secret: credentials appear as "changed", tokens and
 * passwords not at all.
 */
@Injectable()
export class AuditService {
  constructor(private readonly audit: AuditRepository) {}

  /** Records `entries` made by `auth`'s principal, inside `q` (a transaction) when given. */
  record(q: Sql | null, auth: Pick<AuthContext, 'workspaceId' | 'principal' | 'label'>, ...entries: NewAuditEntry[]): Promise<void> {
    return this.recordAs(q, auth.workspaceId, actorOf(auth), entries);
  }

  recordAs(q: Sql | null, workspaceId: string, actor: AuditActor, entries: NewAuditEntry[]): Promise<void> {
    return this.audit.insert(q, workspaceId, actor, entries);
  }

  /**
   * `entries` as a CTE named `audit` for another module's statement to embed (a piece of it:
   * database/statement.ts numbers its parameters): the entries commit with that statement or
   * not at all.
   */
  recordCte(auth: Pick<AuthContext, 'workspaceId' | 'principal' | 'label'>, ...entries: NewAuditEntry[]): Cte<'audit'> {
    return this.audit.insertCte(auth.workspaceId, actorOf(auth), entries);
  }

  async list(workspaceId: string, filter: AuditFilter, limit = DEFAULT_PAGE_SIZE, cursor?: string): Promise<Page<AuditEventView>> {
    const rows = await this.audit.list(workspaceId, filter, decodeCursor(cursor), limit);
    return toPage(rows, limit, toAuditEventView);
  }

  async forSubject(workspaceId: string, subjectId: string): Promise<AuditEventView[]> {
    return (await this.audit.forSubject(workspaceId, subjectId)).map(toAuditEventView);
  }
}
