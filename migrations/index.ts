import { Foundation1764460000000 } from './1764460000000-foundation';
import { PublishEngine1764470000000 } from './1764470000000-publish-engine';
import { DeadLetter1764480000000 } from './1764480000000-dead-letter';
import { Media1764490000000 } from './1764490000000-media';
import { LinkedInOperatorEndpoints1764510000000 } from './1764510000000-linkedin-operator-endpoints';
import { SettingsPage1764520000000 } from './1764520000000-settings-page';
import { Notifications1764530000000 } from './1764530000000-notifications';
import { MediaQuota1764540000000 } from './1764540000000-media-quota';
import { JobsOutliveOwners1764550000000 } from './1764550000000-jobs-outlive-owners';
import { Team1764600000000 } from './1764600000000-team';
import { BlueskyOAuth1764900000000 } from './1764900000000-bluesky-oauth';
import { Threads1765100000000 } from './1765100000000-threads';
import { PostDrafts1765200000000 } from './1765200000000-post-drafts';
import { SlowStart1765400000000 } from './1765400000000-slow-start';
import { MailAbuse1765180000000 } from './1765180000000-mail-abuse';
import { NarrowJobState1765600000000 } from './1765600000000-narrow-job-state';
import { SlowStartRate1765700000000 } from './1765700000000-slow-start-rate';
import { SealedMail1765800000000 } from './1765800000000-sealed-mail';
import { InvitationInviters1765810000000 } from './1765810000000-invitation-inviters';
import { LinkCardFetches1765870000000 } from './1765870000000-link-card-fetches';
import { AccountConnectStates1765900000000 } from './1765900000000-account-connect-states';
import { TablesByOwner1765910000000 } from './1765910000000-tables-by-owner';
import { ThreadsOfTwo1765930000000 } from './1765930000000-threads-of-two';
import { Mastodon1765940000000 } from './1765940000000-mastodon';
import { MastodonOAuth1765950000000 } from './1765950000000-mastodon-oauth';
import { Approvals1765960000000 } from './1765960000000-approvals';
import { ReviewLinks1765970000000 } from './1765970000000-review-links';
import { PostingQueue1765980000000 } from './1765980000000-posting-queue';
import { EventWebhooks1765990000000 } from './1765990000000-event-webhooks';
import { NotificationWakeups1766000000000 } from './1766000000000-notification-wakeups';

/** Every migration, in order. Listed explicitly so the build and the tests load the same set. */
export const MIGRATIONS = [
  Foundation1764460000000,
  PublishEngine1764470000000,
  DeadLetter1764480000000,
  Media1764490000000,
  LinkedInOperatorEndpoints1764510000000,
  SettingsPage1764520000000,
  Notifications1764530000000,
  MediaQuota1764540000000,
  JobsOutliveOwners1764550000000,
  Team1764600000000,
  BlueskyOAuth1764900000000,
  Threads1765100000000,
  MailAbuse1765180000000,
  PostDrafts1765200000000,
  SlowStart1765400000000,
  NarrowJobState1765600000000,
  SlowStartRate1765700000000,
  SealedMail1765800000000,
  InvitationInviters1765810000000,
  LinkCardFetches1765870000000,
  AccountConnectStates1765900000000,
  TablesByOwner1765910000000,
  ThreadsOfTwo1765930000000,
  Mastodon1765940000000,
  MastodonOAuth1765950000000,
  Approvals1765960000000,
  ReviewLinks1765970000000,
  PostingQueue1765980000000,
  EventWebhooks1765990000000,
  NotificationWakeups1766000000000,
];
