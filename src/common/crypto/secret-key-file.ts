import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseSecretKey } from '../../config/config';

/**
 * Without HERALD_SECRET_KEY, the key lives in `<dataDir>/secret.key` (created once, mode 0600).
 * Hosts sharing one database must share the key, or they cannot read each other's credentials.
 */
export function loadOrCreateSecretKey(dataDir: string, warn: (msg: string) => void): Buffer {
  const file = path.join(dataDir, 'secret.key');
  if (fs.existsSync(file)) {
    return parseSecretKey(fs.readFileSync(file, 'utf8'), file);
  }
  fs.mkdirSync(dataDir, { recursive: true });
  const key = randomBytes(32);
  // 'wx' fails if another process created the file first: then use theirs.
  try {
    fs.writeFileSync(file, key.toString('hex') + '\n', { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return parseSecretKey(fs.readFileSync(file, 'utf8'), file);
    throw err;
  }
  warn(
    `HERALD_SECRET_KEY is not set: generated a new credentials key in ${file}. ` +
      "Every host that shares this database must use the same key (set HERALD_SECRET_KEY to the file's content).",
  );
  return key;
}
