import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { SecretBox } from '../common/crypto/secret-box';
import type { Sql } from '../database/db';
import { MailOutboxRepository } from './mail-outbox.repository';
import { sealBody } from './mail-seal';
import type { MailKind } from './mail-driver';
import type { MailState, NewMail } from './mail.types';

/**
 * How other modules send mail: a mail is written to the outbox in the transaction that decides
 * it (the digest claim, the alert event), and MailSender sends it afterwards, outside any
 * transaction. A mail with a one-use link is written sealed (mail-seal.ts): the callers hand over
 * the body as it will be read, and nothing they enqueue puts a live token in the database.
 */
@Injectable()
export class MailOutbox {
  constructor(
    private readonly outbox: MailOutboxRepository,
    private readonly box: SecretBox,
  ) {}

  /** Writes a mail to send, in `runner`'s transaction; returns its id. */
  async enqueue(runner: Sql, mail: NewMail): Promise<string> {
    const id = randomUUID();
    await this.outbox.enqueue(runner, id, { ...mail, ...sealBody(this.box, id, mail.kind, mail) });
    return id;
  }

  /** How many mails of `kind` the workspace wrote since `since` (a daily limit counts them), in `runner`'s transaction. */
  countSince(runner: Sql, workspaceId: string, kind: MailKind, since: Date): Promise<number> {
    return this.outbox.countSince(runner, workspaceId, kind, since);
  }

  /** Where a mail stands (sent, failed, still trying). */
  state(id: string): Promise<MailState | null> {
    return this.outbox.state(id);
  }
}
