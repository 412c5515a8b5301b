/**
 * The five outcome classes: the list and its meaning are src/vocabulary/vocabulary.ts's (one
 * definition, which every module may import); retry decides what each class does.
 */
export { ERROR_CLASSES, type ErrorClass } from '../vocabulary/vocabulary';
