import { raw, sql, SqlPiece } from '../../database/statement';
import { POST_STATUS_SQL } from '../post-status';

/**
 * A post's status as its jobs tell it, as a piece of the posts module's list statement (the
 * filter `?status=`): a correlated aggregate over the post's jobs, through
 * jobs_post_id_account_id_key, run for each post the list reads when a status is asked for. Not a
 * statement of its own: the list pages by the posts' keyset, and only a filter inside that
 * statement lets a page hold `limit` posts of the status. The expression is built from the rules
 * derivePostStatus runs (post-status.ts), so the filter and the views cannot disagree. A post
 * without jobs (a draft) gets `cancelled` here; the posts module says `draft` first.
 */
export function postStatusOf(postId: SqlPiece): SqlPiece {
  return sql`(SELECT ${raw(POST_STATUS_SQL)} FROM jobs j WHERE j.post_id = ${postId})`;
}
