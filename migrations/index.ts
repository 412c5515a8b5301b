import { Foundation1764460000000 } from './1764460000000-foundation';

/** Every migration, in order. Listed explicitly so the build and the tests load the same set. */
export const MIGRATIONS = [Foundation1764460000000];
