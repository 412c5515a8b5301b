import { Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import * as path from 'node:path';
import { HERALD_CONFIG, HeraldConfig } from '../config/config';
import { MAIL_DRIVER, MailDriver } from './mail-driver';
import { MailOutboxRepository } from './mail-outbox.repository';
import { MailOutbox } from './mail-outbox.service';
import { MailSender } from './mail-sender.service';
import { MailMetrics } from './mail.metrics';
import { OutboxDriver } from './outbox.driver';
import { SmtpDriver } from './smtp.driver';

/** The domain of MAIL_FROM's address, for Message-IDs (`<id@domain>`). */
export function messageIdDomain(mailFrom: string): string {
  const m = /@([A-Za-z0-9.-]+)>?\s*$/.exec(mailFrom);
  return m ? m[1].toLowerCase() : 'herald.invalid';
}

export function createMailDriver(config: HeraldConfig): MailDriver {
  const domain = messageIdDomain(config.mailFrom);
  return config.smtpUrl
    ? new SmtpDriver(config.smtpUrl, config.mail.timeoutMs, domain)
    : new OutboxDriver(path.join(config.dataDir, 'outbox'), domain);
}

/** Mail out: the outbox table, the driver chosen by SMTP_URL, the sender and its metrics. */
@Module({
  providers: [
    { provide: MAIL_DRIVER, inject: [HERALD_CONFIG], useFactory: createMailDriver },
    MailOutboxRepository,
    MailOutbox,
    MailMetrics,
    MailSender,
  ],
  exports: [MailOutbox, MailSender],
})
export class MailModule implements OnApplicationShutdown {
  constructor(@Inject(MAIL_DRIVER) private readonly driver: MailDriver) {}

  onApplicationShutdown(): void {
    this.driver.close();
  }
}
