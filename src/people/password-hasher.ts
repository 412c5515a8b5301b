import { Injectable } from '@nestjs/common';
import * as argon2 from 'argon2';
import { Semaphore } from '../common/keyed-turns';
import { ARGON2_PARAMS } from './credentials';

/**
 * argon2id through the `argon2` package (libargon2, prebuilt). The hash runs on libuv's thread
 * pool, not on the event loop: at most ARGON2_AT_ONCE of them at a time, so a flood of
 * passwords (from however many addresses) leaves that pool's other threads to DNS lookups and
 * file reads, which the delivery engine needs.
 */
const ARGON2_AT_ONCE = 2;

@Injectable()
export class PasswordHasher {
  private readonly slots = new Semaphore(ARGON2_AT_ONCE);

  /** A hash of a password nobody has, for answering an unknown address as slowly as a known one. */
  private readonly decoy: Promise<string> = this.hash('herald decoy password, never a real one');

  hash(password: string): Promise<string> {
    return this.slots.use(() => argon2.hash(password, { type: argon2.argon2id, ...ARGON2_PARAMS }));
  }

  /** Does `password` match `stored`? A malformed stored hash is a mismatch, not an error. */
  async verify(stored: string, password: string): Promise<boolean> {
    try {
      return await this.slots.use(() => argon2.verify(stored, password));
    } catch {
      return false;
    }
  }

  /** Spends the time of one verification without a person (an unknown address). */
  async verifyDecoy(password: string): Promise<false> {
    await this.verify(await this.decoy, password);
    return false;
  }

  needsRehash(stored: string): boolean {
    try {
      return argon2.needsRehash(stored, ARGON2_PARAMS);
    } catch {
      return true;
    }
  }
}
