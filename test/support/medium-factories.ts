import type { AuthContext } from '../../src/access/auth-context';
import { CreateAccountDto } from '../../src/accounts/accounts.dto';
import { AccountsService } from '../../src/accounts/accounts.service';
import { UpdateNotificationSettingsDto } from '../../src/notifications/notification-settings.dto';
import { NotificationSettingsService } from '../../src/notifications/notification-settings.service';
import type { PostView } from '../../src/posts/post.types';
import { CreatePostDto } from '../../src/posts/posts.dto';
import { PostsService } from '../../src/posts/posts.service';
import type { WebhookAccount } from './engine';
import { preconfirmRecipients } from './mail';
import type { Medium, MediumWorkspace } from './medium';

/**
 * Factories for medium tests (./medium.ts), made through the services the API's controllers call,
 * with the body validated by the app's pipe: what ./engine.ts and ./mail.ts make over HTTP.
 * Each needs its service's module in the context (accounts, posts, notifications).
 */

/** A webhook account pointing at `url`, as POST /v1/accounts makes it; its signing secret, shown once. */
export async function webhookAccount(
  m: Medium,
  auth: AuthContext,
  url: string,
  extra: Record<string, unknown> = {},
): Promise<WebhookAccount> {
  const dto = await m.input(CreateAccountDto, { provider: 'webhook', name: 'Blog', config: { url }, ...extra });
  const created = await m.get(AccountsService).create(auth, dto);
  if (!created.secret) throw new Error('a webhook account was made without its signing secret');
  return { id: created.id, secret: created.secret };
}

/** A post, as POST /v1/posts makes it (without an Idempotency-Key). */
export async function createPost(m: Medium, auth: AuthContext, body: Record<string, unknown>): Promise<PostView> {
  const result = await m.get(PostsService).create(auth, await m.input(CreatePostDto, body), body);
  return result.body as PostView;
}

/** Saves notification settings as PUT /v1/settings/notifications does, the recipients confirmed beforehand (mail.ts preconfirmRecipients). */
export async function saveNotificationSettings(m: Medium, ws: MediumWorkspace, body: Record<string, unknown>): Promise<void> {
  const recipients = (body.digest as { recipients?: unknown } | undefined)?.recipients;
  if (Array.isArray(recipients)) await preconfirmRecipients(m.databaseUrl, ws.key, recipients as string[]);
  await m.get(NotificationSettingsService).update(ws.auth, await m.input(UpdateNotificationSettingsDto, body));
}
