import { Injectable } from '@nestjs/common';
import type { Sql } from '../database/db';
import { MailOutboxRepository } from './mail-outbox.repository';
import type { MailState, NewMail } from './mail.types';

/**
 * How other modules send mail: a mail is written to the outbox in the transaction that decides
 * it (the digest claim, the alert event), and MailSender sends it afterwards, outside any
 * transaction.
 */
@Injectable()
export class MailOutbox {
  constructor(private readonly outbox: MailOutboxRepository) {}

  /** Writes a mail to send, in `runner`'s transaction; returns its id. */
  enqueue(runner: Sql, mail: NewMail): Promise<string> {
    return this.outbox.enqueue(runner, mail);
  }

  /** Where a mail stands (sent, failed, still trying). */
  state(id: string): Promise<MailState | null> {
    return this.outbox.state(id);
  }
}
