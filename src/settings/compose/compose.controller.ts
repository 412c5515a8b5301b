import { Body, Controller, Get, Param, Post, Query, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import type { AccountView } from '../../accounts/account.types';
import { ParseIdPipe } from '../../common/parse-id.pipe';
import type { MediaInfo } from '../../media/media.types';
import { MediaService } from '../../media/media.service';
import { limitsFor, PLATFORM_LIMITS } from '../../posts/platform-rules';
import type { PostView } from '../../posts/post.types';
import { CreatePostDto, MAX_THREAD_PARTS, UpdatePostDto } from '../../posts/posts.dto';
import { LinkCard, LinkCardQuotaError, LinkCardService } from '../../posts/link-card.service';
import { ApprovalsService } from '../../approvals/approvals.service';
import { PostsService } from '../../posts/posts.service';
import { Public } from '../../workspaces/auth';
import { AccountsPageService, PROVIDER_LABELS } from '../accounts-page.service';
import { asDto, personMessage } from '../form-validation';
import { PageExceptionFilter } from '../page-exception.filter';
import { PageRenderer } from '../page-renderer';
import { cookie, PageRequest, requirePage } from '../session/page-request';
import { PageSessionGuard } from '../session/page-session.guard';
import type { PageSession } from '../../people/session.types';
import type { Provider } from '../../vocabulary/vocabulary';
import {
  ComposeAccount,
  ComposeAction,
  ComposeValues,
  emptyValues,
  imageLimit,
  instantsOf,
  moveMedia,
  moveParts,
  previewFor,
  readComposeForm,
  showsLinkCard,
  targetOf,
  threadOf,
  withAccountNames,
} from './compose-form';
import { isTimeZone, timeZones, wallTimeOf, zoneLabel } from '../../common/zoned-time';

/** Who sees a Mastodon status, as the composer offers it (the API's `visibility` values). */
const MASTODON_VISIBILITY_CHOICES = [
  { value: 'public', label: 'Public: everyone, and the public timelines' },
  { value: 'unlisted', label: 'Unlisted: everyone, not the public timelines' },
  { value: 'private', label: 'Followers only' },
  { value: 'direct', label: 'Mentioned accounts only' },
];

/** Each platform's images per post, as the composer says it: "Bluesky 4, LinkedIn 20, Mastodon 4, Blog webhook 4". */
const IMAGES_HINT = `Each platform takes its own number of images per post (${(Object.keys(PLATFORM_LIMITS) as Provider[])
  .map((p) => `${PROVIDER_LABELS[p]} ${PLATFORM_LIMITS[p].maxImages}`)
  .join(', ')}): a post takes as many as the smallest of its accounts'.`;

/** The browser's time zone, as the page's script keeps it (IANA name): the fallback when a form or link has none. */
export const ZONE_COOKIE = 'herald_tz';

/** The zone of a request: the form's or the link's, else the browser's (cookie), else UTC. */
export function zoneOf(req: PageRequest, source: unknown): string {
  const given = typeof source === 'object' && source !== null ? (source as Record<string, unknown>).zone : undefined;
  if (isTimeZone(given)) return given;
  const remembered = cookie(req, ZONE_COOKIE);
  return isTimeZone(remembered) ? remembered : 'UTC';
}

/** A file the multipart parser (settings.module.ts) left on the request, or why it could not. */
type UploadRequest = PageRequest & { file?: { buffer: Buffer; size: number }; uploadProblem?: string };

const postId = new ParseIdPipe('post');

/** What the composer is editing. */
type Mode =
  | { kind: 'new' }
  | { kind: 'draft'; post: PostView }
  /** Scheduled, no job started: content and time change, the accounts are fixed (the API's rule). */
  | { kind: 'scheduled'; post: PostView };

/** A job has started once an attempt ran or it left scheduled/paused (PostsService.update's rule). */
const started = (j: PostView['jobs'][number]) => j.attemptCount > 0 || !['scheduled', 'paused'].includes(j.status);

const JOB_WORDS: Record<string, string> = {
  scheduled: 'waiting',
  in_progress: 'sending',
  succeeded: 'published',
  paused: 'waiting (paused: its account needs attention)',
  dead: 'failed',
  cancelled: 'cancelled',
  discarded: 'failed (discarded)',
};

/**
 * The composer (/settings/compose, and /settings/posts/:id/edit for a draft or a post none of
 * whose deliveries started): text with a counter per chosen account, title, link, images with
 * alt text, the accounts, "publish now" or a time in the person's zone, a deadline, a draft;
 * the preview of what each platform gets. One multipart form whose buttons say what to do, so
 * everything works without the page's script; every save goes through PostsService (the API's
 * rules and messages) and MediaService.
 */
@ApiExcludeController()
@Public()
@UseGuards(PageSessionGuard)
@UseFilters(PageExceptionFilter)
@Controller('settings')
export class ComposeController {
  constructor(
    private readonly pages: PageRenderer,
    private readonly posts: PostsService,
    private readonly media: MediaService,
    private readonly accounts: AccountsPageService,
    private readonly linkCards: LinkCardService,
    private readonly approvals: ApprovalsService,
  ) {}

  @Get('compose')
  async compose(@Req() req: PageRequest, @Res() res: Response, @Query() query: Record<string, unknown>): Promise<void> {
    const session = requirePage(req);
    const zone = zoneOf(req, query);
    const values = emptyValues(zone);
    // A suggestion: the next full hour, in the person's zone.
    const next = wallTimeOf(new Date(Math.ceil((Date.now() + 60_000) / 3_600_000) * 3_600_000), zone);
    values.date = next.date;
    values.time = next.time;
    await this.show(res, session, { kind: 'new' }, values, {});
  }

  @Post('compose')
  async submitNew(@Req() req: UploadRequest, @Res() res: Response, @Body() body: Record<string, unknown>): Promise<void> {
    await this.submit(req, res, body, { kind: 'new' });
  }

  @Get('posts/:id/edit')
  async edit(@Req() req: PageRequest, @Res() res: Response, @Param('id', postId) id: string, @Query() query: Record<string, unknown>) {
    const session = requirePage(req);
    const post = await this.posts.get(session.auth.workspaceId, id);
    const zone = zoneOf(req, query);
    const mode = this.modeOf(post);
    if (!mode) {
      await this.showStarted(res, session, post);
      return;
    }
    const media = await this.media.requireMany(session.auth.workspaceId, post.media);
    const at = post.scheduledAt ? wallTimeOf(new Date(post.scheduledAt), zone) : { date: '', time: '' };
    const by = post.publishBy ? wallTimeOf(new Date(post.publishBy), zone) : { date: '', time: '' };
    const jobOptions = mastodonOptionsOfJobs(post);
    const values: ComposeValues = {
      text: post.text,
      title: post.title ?? '',
      link: post.link ?? '',
      accounts: post.draftTargets
        ? post.draftTargets.map((t) => t.accountId)
        : post.jobs.filter((j) => j.status !== 'cancelled').map((j) => j.accountId),
      media: post.media,
      alts: Object.fromEntries(media.map((m) => [m.id, m.alt])),
      newAlt: '',
      date: at.date,
      time: at.time,
      zone,
      deadlineDate: by.date,
      deadlineTime: by.time,
      parts: (post.thread ?? []).map((p) => ({ text: p.text, link: p.link ?? '', media: [...p.media] })),
      // A draft's Mastodon targets carry the visibility and content warning chosen; a scheduled
      // post's Mastodon jobs do (an edit keeps them: the form shows them for the counter and preview).
      visibility: post.draftTargets?.find((t) => t.visibility !== undefined)?.visibility ?? jobOptions?.visibility ?? '',
      spoilerText: post.draftTargets?.find((t) => t.spoilerText !== undefined)?.spoilerText ?? jobOptions?.spoilerText ?? '',
    };
    await this.show(res, session, mode, values, {});
  }

  @Post('posts/:id/edit')
  async submitEdit(
    @Req() req: UploadRequest,
    @Res() res: Response,
    @Param('id', postId) id: string,
    @Body() body: Record<string, unknown>,
  ) {
    const session = requirePage(req);
    const post = await this.posts.get(session.auth.workspaceId, id);
    const mode = this.modeOf(post);
    if (!mode) {
      await this.showStarted(res, session, post, 'its delivery started meanwhile, so this edit was not saved');
      return;
    }
    await this.submit(req, res, body, mode);
  }

  /** null once a delivery started (or the post is cancelled): then it is shown, not edited. */
  private modeOf(post: PostView): Mode | null {
    // A post waiting for approval is edited as a draft is (its accounts too); it keeps waiting.
    if (post.status === 'draft' || post.status === 'pending_approval') return { kind: 'draft', post };
    const live = post.jobs.filter((j) => j.status !== 'cancelled');
    if (live.length > 0 && !post.jobs.some(started)) return { kind: 'scheduled', post };
    return null;
  }

  private async submit(req: UploadRequest, res: Response, body: Record<string, unknown>, mode: Mode): Promise<void> {
    const session = requirePage(req);
    const auth = session.auth;
    const { values, action } = readComposeForm(body, zoneOf(req, body));
    if (mode.kind === 'scheduled') {
      // Fixed with the jobs: the accounts, and a Mastodon job's visibility and content warning
      // (the form does not offer them; they count, and show in the preview, as they will be sent).
      values.accounts = mode.post.jobs.filter((j) => j.status !== 'cancelled').map((j) => j.accountId);
      const options = mastodonOptionsOfJobs(mode.post);
      values.visibility = options?.visibility ?? '';
      values.spoilerText = options?.spoilerText ?? '';
    }
    const notes: string[] = [];
    try {
      // Alt text typed for the images already there is saved with any button.
      await this.saveAlts(session, values);
      // A file chosen is uploaded with any button (alt text required, as posting requires it).
      if (req.uploadProblem) throw new PageProblem(`the image was not added: ${req.uploadProblem}`);
      if (req.file && req.file.size > 0) {
        const limit = await this.imageLimitFor(auth.workspaceId, values.accounts);
        if (values.media.length >= limit) {
          throw new PageProblem(
            values.accounts.length > 0
              ? `the image was not added: a post to the chosen accounts takes at most ${limit} images (remove one first)`
              : `the image was not added: a post takes at most ${limit} images until you choose accounts that take more`,
          );
        }
        if (values.newAlt === '')
          throw new PageProblem('the image was not added: describe it in “Alt text for the new image” (alt text is required)');
        const uploaded = await this.media.upload(auth, req.file.buffer, values.newAlt);
        values.media.push(uploaded.id);
        values.alts[uploaded.id] = uploaded.alt;
        values.newAlt = '';
        notes.push('Image added.');
      } else if (action.kind === 'upload') {
        throw new PageProblem('choose an image file first');
      }
    } catch (err) {
      await this.showProblem(res, session, mode, values, err);
      return;
    }
    switch (action.kind) {
      case 'up':
      case 'down':
      case 'remove':
        values.media = moveMedia(values.media, action);
        notes.push(
          action.kind === 'remove' ? 'Image removed from the post (nothing is saved until you schedule or save it).' : 'Images reordered.',
        );
        await this.show(res, session, mode, values, { notes });
        return;
      case 'add-part':
      case 'part-up':
      case 'part-down':
      case 'part-remove': {
        const before = values.parts.length;
        values.parts = moveParts(values.parts, action);
        notes.push(
          action.kind === 'add-part'
            ? values.parts.length === before
              ? `A thread has at most ${MAX_THREAD_PARTS} further parts.`
              : before === 0
                ? `Thread started: part 2 is below the text (a thread has 1 to ${MAX_THREAD_PARTS} further parts).`
                : `Part ${values.parts.length + 1} added.`
            : action.kind === 'part-remove'
              ? values.parts.length === 0
                ? 'Part removed: the post is a single post again (nothing is saved until you schedule or save it).'
                : 'Part removed from the thread (nothing is saved until you schedule or save it).'
              : 'Parts reordered.',
        );
        await this.show(res, session, mode, values, { notes });
        return;
      }
      case 'card':
        await this.showCard(res, session, mode, values, notes);
        return;
      case 'upload':
      case 'preview':
        await this.show(res, session, mode, values, { notes });
        return;
      case 'none':
        await this.show(res, session, mode, values, { notes, error: 'nothing was saved: use one of the buttons of the form', status: 400 });
        return;
      default:
        await this.save(res, session, mode, values, action);
    }
  }

  /** The images a post to these accounts takes (the smallest of their platforms' limits). */
  private async imageLimitFor(workspaceId: string, accountIds: readonly string[]): Promise<number> {
    const chosen = new Set(accountIds);
    const accounts = (await this.accounts.all(workspaceId)).filter((a) => chosen.has(a.id));
    return imageLimit(accounts.map((a) => a.provider));
  }

  private async saveAlts(session: PageSession, values: ComposeValues): Promise<void> {
    if (values.media.length === 0) return;
    const current = await this.media.requireMany(session.auth.workspaceId, values.media);
    for (const m of current) {
      const typed = values.alts[m.id] ?? '';
      if (typed !== m.alt && typed !== '') await this.media.setAlt(session.auth, m.id, typed);
      if (typed === '') values.alts[m.id] = m.alt;
    }
  }

  /** Publish now, schedule or keep as a draft, through PostsService. */
  private async save(
    res: Response,
    session: PageSession,
    mode: Mode,
    values: ComposeValues,
    action: Extract<ComposeAction, { kind: 'now' | 'schedule' | 'draft' }>,
  ): Promise<void> {
    const auth = session.auth;
    const accounts = await this.accounts.all(auth.workspaceId);
    const names = new Map(accounts.map((a) => [a.id, a.name]));
    const content = {
      text: values.text,
      ...(values.title !== '' ? { title: values.title } : {}),
      ...(values.link !== '' ? { link: values.link } : {}),
      media: values.media,
    };
    const thread = threadOf(values.parts);
    const providers = new Map(accounts.map((a) => [a.id, a.provider]));
    // A Mastodon account's target carries the visibility and content warning chosen for Mastodon.
    const targets = values.accounts.map((accountId) =>
      targetOf({ id: accountId, provider: providers.get(accountId) ?? 'webhook' }, values),
    );
    let labels = values.accounts.map((id, i) => ({ label: `targets.${i}`, name: names.get(id) ?? 'an account' }));
    try {
      if (action.kind !== 'draft' && values.accounts.length === 0) throw new PageProblem('choose at least one account to publish to');
      if (action.kind === 'draft' && values.accounts.length === 0) throw new PageProblem('choose at least one account for the draft');
      const when = action.kind === 'draft' ? null : instantsOf(values, action.kind === 'now');
      if (when && !when.ok) throw new PageProblem(when.problem);
      const time = when?.ok
        ? { ...(when.scheduledAt ? { scheduledAt: when.scheduledAt } : {}), ...(when.publishBy ? { publishBy: when.publishBy } : {}) }
        : {};
      let post: PostView;
      if (mode.kind === 'new') {
        const dto = await asDto(CreatePostDto, {
          ...content,
          ...(thread ? { thread } : {}),
          targets,
          ...(action.kind === 'draft' ? { status: 'draft' } : time),
        });
        post = (await this.posts.create(auth, dto, dto)).body as PostView;
      } else if (mode.kind === 'draft') {
        const patch =
          action.kind === 'draft'
            ? { ...content, title: content.title ?? null, link: content.link ?? null, thread, targets }
            : { ...content, title: content.title ?? null, link: content.link ?? null, thread, targets, status: 'scheduled', ...time };
        post = await this.posts.update(auth, mode.post.id, await asDto(UpdatePostDto, patch));
      } else {
        if (action.kind === 'draft') throw new PageProblem('a scheduled post does not go back to being a draft');
        labels = mode.post.jobs.map((j) => ({ label: `job ${j.id}`, name: names.get(j.accountId) ?? 'an account' }));
        const now = new Date().toISOString();
        const patch = {
          ...content,
          title: content.title ?? null,
          link: content.link ?? null,
          thread,
          scheduledAt: action.kind === 'now' ? now : (time.scheduledAt ?? now),
          publishBy: time.publishBy ?? null,
        };
        post = await this.posts.update(auth, mode.post.id, await asDto(UpdatePostDto, patch));
      }
      await this.afterSave(res, session, post, values.zone, action.kind, mode.kind !== 'new');
    } catch (err) {
      const known = err instanceof PageProblem ? { status: 400, message: err.message } : personMessage(err);
      if (!known) throw err;
      await this.show(res, session, mode, values, { error: withAccountNames(known.message, labels), status: known.status });
    }
  }

  private async afterSave(res: Response, session: PageSession, post: PostView, zone: string, kind: string, edited: boolean): Promise<void> {
    if (post.status === 'pending_approval') {
      await this.pages.redirect(res, session, '/settings/approvals', {
        tone: 'success',
        text: 'Submitted for approval: the owners are told by mail. Nothing is published until an owner approves it.',
      });
      return;
    }
    if (post.status === 'draft') {
      await this.pages.redirect(res, session, `/settings/posts/${post.id}/edit`, {
        tone: 'success',
        text: 'Saved as a draft: it is kept, and never published until you schedule it.',
      });
      return;
    }
    const at = new Date(post.scheduledAt ?? Date.now());
    const wall = wallTimeOf(at, zone);
    const paused = post.jobs.filter((j) => j.status === 'paused').length;
    const waits =
      paused > 0
        ? ` ${paused === 1 ? 'One account needs' : `${paused} accounts need`} attention: its post waits (paused) until it is fixed.`
        : '';
    const accounts = `${post.jobs.length} account${post.jobs.length === 1 ? '' : 's'}`;
    const text =
      kind === 'now'
        ? `${edited ? 'Saved: publishing' : 'Publishing'} now to ${accounts}.${waits}`
        : `${edited ? 'Saved: scheduled' : 'Scheduled'} for ${wall.date} ${wall.time}, ${zoneLabel(zone, at)}, to ${accounts}.${waits}`;
    await this.pages.redirect(res, session, `/settings/calendar?view=week&date=${wall.date}&zone=${encodeURIComponent(zone)}`, {
      tone: 'success',
      text,
    });
  }

  private async showProblem(res: Response, session: PageSession, mode: Mode, values: ComposeValues, err: unknown): Promise<void> {
    const known = err instanceof PageProblem ? { status: 400, message: err.message } : personMessage(err);
    if (!known) throw err;
    await this.show(res, session, mode, values, { error: known.message, status: known.status });
  }

  /**
   * "Fetch the link card": fetched only when a chosen account shows one (otherwise nothing is
   * read, and the page says why), and at most LINK_CARDS_PER_WINDOW a minute per person (429).
   */
  private async showCard(res: Response, session: PageSession, mode: Mode, values: ComposeValues, notes: string[]): Promise<void> {
    const ws = session.auth.workspaceId;
    const chosen = new Set(values.accounts);
    const accounts = (await this.accounts.all(ws)).filter((a) => chosen.has(a.id));
    const images = (await this.media.findExisting(ws, values.media)).length;
    if (!accounts.some((a) => showsLinkCard(a.provider, images, values.link))) {
      await this.show(res, session, mode, values, {
        notes,
        error: 'no link card was fetched: none of the chosen accounts shows one (Bluesky does, for a post with a link and no image)',
        status: 400,
      });
      return;
    }
    let card: LinkCard;
    try {
      card = await this.linkCards.fetch(session.auth, values.link, values.title);
    } catch (err) {
      if (!(err instanceof LinkCardQuotaError)) throw err;
      res.setHeader('Retry-After', String(err.retryAfterS));
      await this.show(res, session, mode, values, { notes, error: err.message, status: 429 });
      return;
    }
    await this.show(res, session, mode, values, { notes, card });
  }

  private async show(
    res: Response,
    session: PageSession,
    mode: Mode,
    values: ComposeValues,
    extra: { notes?: string[]; error?: string; status?: number; card?: LinkCard },
  ): Promise<void> {
    const ws = session.auth.workspaceId;
    const all = await this.accounts.all(ws);
    const chosen = new Set(values.accounts);
    // Images that no longer exist drop out of the form (their id would be refused).
    let media: (MediaInfo & { url: string })[] = [];
    const kept: string[] = [];
    for (const id of values.media) {
      try {
        const m = await this.media.get(ws, id);
        media.push({ ...(await this.media.requireMany(ws, [id]))[0], url: m.url });
        kept.push(id);
      } catch {
        // gone: not shown
      }
    }
    values.media = kept;
    media = media.map((m) => ({ ...m, alt: values.alts[m.id] || m.alt }));
    const composeAccounts: (ComposeAccount & { view: AccountView })[] = all.map((a) => ({
      id: a.id,
      name: a.name,
      provider: a.provider,
      providerLabel: PROVIDER_LABELS[a.provider],
      config: a.config,
      view: a,
    }));
    const chosenAccounts = composeAccounts.filter((a) => chosen.has(a.id));
    // The images thread parts already have (kept as they are): read for the parts' checks.
    // One query; an image that is gone is left out here, and the API names it when the post is saved.
    const partIds = [...new Set(values.parts.flatMap((p) => p.media))];
    const partMedia = new Map((await this.media.findExisting(ws, partIds)).map((m): [string, MediaInfo] => [m.id, m]));
    const previews = chosenAccounts.map((a) => ({
      ...previewFor(a, values, media, (id) => partMedia.get(id)),
      needsPerson: a.view.status !== 'active',
    }));
    const limit = imageLimit(chosenAccounts.map((a) => a.provider));
    const at = new Date();
    const pending = mode.kind === 'draft' && mode.post.status === 'pending_approval';
    const title =
      mode.kind === 'new'
        ? 'Write a post'
        : pending
          ? 'Edit the post waiting for approval'
          : mode.kind === 'draft'
            ? 'Edit the draft'
            : 'Edit the scheduled post';
    // Where approval applies, the composer asks for it instead of scheduling; a draft sent back shows why.
    const needsApproval = pending || (await this.approvals.requiredOf(session.auth));
    const lastStep = mode.kind === 'draft' ? (await this.approvals.latest(ws, [mode.post.id])).get(mode.post.id) : undefined;
    const rejection = mode.kind === 'draft' && !pending && lastStep?.step === 'rejected' ? lastStep : null;
    await this.pages.render(
      res,
      'compose',
      { title, section: 'compose', session, status: extra.error ? (extra.status ?? 400) : 200 },
      {
        heading: title,
        action: mode.kind === 'new' ? '/settings/compose' : `/settings/posts/${mode.post.id}/edit`,
        isNew: mode.kind === 'new',
        isDraft: mode.kind === 'draft' && !pending,
        isPending: pending,
        needsApproval,
        rejection,
        isScheduled: mode.kind === 'scheduled',
        canDraft: mode.kind !== 'scheduled',
        post: mode.kind === 'new' ? null : mode.post,
        values,
        error: extra.error,
        notes: extra.notes ?? [],
        accounts: composeAccounts.map((a) => ({
          id: a.id,
          name: a.name,
          providerLabel: a.providerLabel,
          provider: a.provider,
          checked: chosen.has(a.id),
          // Each account's own limits: a Mastodon account's are its instance's.
          limit: limitsFor(a.provider, a.config).maxText,
          unit: limitsFor(a.provider, a.config).textUnit,
          urlLength: limitsFor(a.provider, a.config).charactersPerUrl,
          threads: limitsFor(a.provider, a.config).threads,
          needsPerson: a.view.status !== 'active',
          why:
            a.view.status === 'disabled'
              ? `disabled${a.view.statusReason ? `: ${a.view.statusReason}` : ''}`
              : a.view.status !== 'active'
                ? `needs re-authentication${a.view.statusReason ? `: ${a.view.statusReason}` : ''}`
                : '',
        })),
        fixedAccounts: mode.kind === 'scheduled' ? chosenAccounts : [],
        noAccounts: all.length === 0,
        media: media.map((m, i) => ({
          id: m.id,
          url: m.url,
          alt: m.alt,
          number: i + 1,
          first: i === 0,
          last: i === media.length - 1,
        })),
        imageLimit: limit,
        canAddImage: media.length < limit,
        imagesHint: IMAGES_HINT,
        parts: values.parts.map((p, i) => ({
          index: i,
          number: i + 2,
          text: p.text,
          link: p.link,
          media: p.media,
          first: i === 0,
          last: i === values.parts.length - 1,
          counters: previews.map((pv) => ({
            name: pv.name,
            providerLabel: pv.providerLabel,
            unit: pv.unit,
            urlLength: pv.urlLength,
            refused: pv.threadRefused !== null,
            ...pv.parts[i],
          })),
        })),
        partCount: values.parts.length,
        threadLabel: values.parts.length === 0 ? 'optional' : `${values.parts.length} further part${values.parts.length === 1 ? '' : 's'}`,
        canAddPart: values.parts.length < MAX_THREAD_PARTS,
        previews,
        // The Mastodon settings are offered when a Mastodon account can be chosen (fixed with the jobs of a scheduled post).
        mastodonOptions: mode.kind !== 'scheduled' && composeAccounts.some((a) => a.provider === 'mastodon'),
        visibilities: [
          { value: '', label: "the account's own default", selected: values.visibility === '' },
          ...MASTODON_VISIBILITY_CHOICES.map((c) => ({ ...c, selected: values.visibility === c.value })),
        ],
        card: extra.card ?? null,
        anyCard: previews.some((p) => p.card),
        zones: zoneOptions(values.zone),
        zoneLabel: zoneLabel(values.zone, at),
      },
    );
  }

  /** A post whose delivery started: what went where, and what can still be done (as the API allows). */
  private async showStarted(res: Response, session: PageSession, post: PostView, error?: string): Promise<void> {
    const accounts = await this.accounts.all(session.auth.workspaceId);
    const names = new Map(accounts.map((a) => [a.id, a]));
    const targets = post.jobs.map((j) => ({
      name: names.get(j.accountId)?.name ?? 'removed account',
      providerLabel: PROVIDER_LABELS[j.provider],
      state: JOB_WORDS[j.status] ?? j.status,
      status: j.status,
      remoteUrl: j.status === 'succeeded' && j.remoteUrl && /^https?:\/\//.test(j.remoteUrl) ? j.remoteUrl : null,
      failedUrl: j.status === 'dead' ? `/settings/failed-posts/${j.id}` : null,
    }));
    const published = targets.filter((t) => t.status === 'succeeded').map((t) => t.name);
    await this.pages.render(
      res,
      'post-started',
      { title: 'Post', section: 'compose', session, status: error ? 409 : 200 },
      {
        post,
        error,
        targets,
        published: published.join(', '),
        anyPublished: published.length > 0,
        anyFailed: targets.some((t) => t.failedUrl !== null),
        cancellable: post.jobs.some((j) => j.status === 'scheduled' || j.status === 'paused'),
        cancelled: post.status === 'cancelled',
      },
    );
  }
}

/** The zones to choose from, the current one selected (added when the runtime's list spells it otherwise, e.g. an alias a browser reports). */
export function zoneOptions(current: string): { value: string; selected: boolean }[] {
  const zones = timeZones();
  if (!zones.includes(current)) zones.unshift(current);
  return zones.map((z) => ({ value: z, selected: z === current }));
}

/** A problem of the form itself, said to the person (400), nothing saved. */
class PageProblem extends Error {}

/** The visibility and content warning a scheduled post's Mastodon jobs carry (one target's settings serve every Mastodon job); null when none set any. */
function mastodonOptionsOfJobs(post: PostView): PostView['jobs'][number]['mastodon'] {
  return post.jobs.find((j) => j.status !== 'cancelled' && j.mastodon !== null)?.mastodon ?? null;
}
