import { Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { Background } from '../common/background';
import { PeopleService } from './people.service';

/**
 * "Forgot your password?" answered before anything is looked up: the page answers the same
 * sentence at once, and the work (find the address, write the link and its mail) runs after the
 * answer has gone. A known address and an unknown one then take the same time to answer, where
 * before the known one's writes made it ~5 ms slower, which told anyone who has an account.
 *
 * The work is kept until it settles (Background), so a shutdown waits for it. A process killed
 * between the answer and the work loses that one request; the person asks again.
 */
@Injectable()
export class ResetRequests implements OnApplicationShutdown {
  private readonly logger = new Logger('PasswordReset');
  private readonly background = new Background((err) =>
    this.logger.warn(`a password-reset request failed: ${err instanceof Error ? err.message : String(err)}`),
  );

  constructor(private readonly people: PeopleService) {}

  /** Starts the work of one request on the next turn of the event loop, after the caller's answer. */
  afterAnswer(rawEmail: string): void {
    this.background.run(new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.people.requestReset(rawEmail)));
  }

  /** Resolves once every request started so far has been handled (shutdown, tests). */
  settled(): Promise<void> {
    return this.background.settled();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.background.settled();
  }
}
