import { Foundation1764460000000 } from './1764460000000-foundation';
import { PublishEngine1764470000000 } from './1764470000000-publish-engine';

/** Every migration, in order. Listed explicitly so the build and the tests load the same set. */
export const MIGRATIONS = [Foundation1764460000000, PublishEngine1764470000000];
