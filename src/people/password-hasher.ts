import { Injectable } from '@nestjs/common';
import * as argon2 from 'argon2';
import { ARGON2_PARAMS } from './credentials';

/**
 * argon2id through the `argon2` package (libargon2, prebuilt). The hash runs on libuv's thread
 * pool, not on the event loop.
 */
@Injectable()
export class PasswordHasher {
  /** A hash of a password nobody has, for answering an unknown address as slowly as a known one. */
  private readonly decoy: Promise<string> = this.hash('herald decoy password, never a real one');

  hash(password: string): Promise<string> {
    return argon2.hash(password, { type: argon2.argon2id, ...ARGON2_PARAMS });
  }

  /** Does `password` match `stored`? A malformed stored hash is a mismatch, not an error. */
  async verify(stored: string, password: string): Promise<boolean> {
    try {
      return await argon2.verify(stored, password);
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
