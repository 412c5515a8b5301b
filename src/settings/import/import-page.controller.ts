import { Body, Controller, Get, Inject, Post, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { createHash, createHmac } from 'node:crypto';
import { HERALD_CONFIG, HeraldConfig } from '../../config/config';
import { MAX_BATCH_POSTS } from '../../posts/posts-batch.dto';
import { PostingQueueService } from '../../posting-queue/posting-queue.service';
import { PostsBatchService } from '../../posts/posts-batch.service';
import { CreatePostDto } from '../../posts/posts.dto';
import type { PageSession } from '../../people/session.types';
import { Public } from '../../workspaces/auth';
import { AccountsPageService } from '../accounts-page.service';
import { zoneOf, zoneOptions } from '../compose/compose.controller';
import { asDto, personMessage } from '../form-validation';
import { PageExceptionFilter } from '../page-exception.filter';
import { PageRenderer } from '../page-renderer';
import { PageRequest, requirePage } from '../session/page-request';
import { PageSessionGuard } from '../session/page-session.guard';
import { sameSecret } from '../session/same-secret';
import {
  ACCOUNT_SEPARATOR,
  Column,
  ImportedPost,
  ImportRow,
  MAX_IMPORT_BYTES,
  MAX_IMPORT_ROWS,
  OPTIONAL_COLUMNS,
  parseImport,
  REQUIRED_COLUMNS,
} from './csv-import';

type UploadRequest = PageRequest & { file?: { buffer: Buffer; size: number }; uploadProblem?: string };

/** The API's field a DTO message starts with, as the file's column. */
const COLUMN_OF_FIELD: Record<string, Column> = { text: 'text', link: 'link', targets: 'accounts', scheduledAt: 'time', queue: 'time' };

/** What the page shows of a row. */
interface RowView {
  row: number;
  text: string;
  accounts: string;
  /** How the time was read ("2026-12-24 09:30 (Europe/Paris)"), else the cell as written. Not `time`: that is a template helper. */
  when: string;
  link: string;
  ok: boolean;
  problems: string[];
  post?: { id: string; status: string };
}

/**
 * The CSV import (/settings/import, docs/settings.md "Importing posts from a CSV file"). Two
 * steps, so nothing is created before the person has seen every row's verdict:
 * 1. the upload: the file is read and checked (csv-import.ts, then the API's own DTO rules on each
 *    row); the page lists every row, ok or its problem naming the column, and creates nothing;
 * 2. "Create N posts": the same file comes back (base64, in a field signed with the server's key
 *    over the workspace, the zone and the file's hash, so only a file this server previewed for
 *    this workspace is taken), is checked again, and its ok rows are created through
 *    POST /v1/posts/batch's path (PostsBatchService), 100 at a time, each batch with an
 *    Idempotency-Key made from the signature: pressing the button twice creates nothing twice.
 */
@ApiExcludeController()
@Public()
@UseGuards(PageSessionGuard)
@UseFilters(PageExceptionFilter)
@Controller('settings/import')
export class ImportPageController {
  private readonly signingKey: Buffer;

  constructor(
    private readonly pages: PageRenderer,
    private readonly batch: PostsBatchService,
    private readonly accounts: AccountsPageService,
    private readonly queue: PostingQueueService,
    @Inject(HERALD_CONFIG) config: HeraldConfig,
  ) {
    // A key of its own, derived from HERALD_SECRET_KEY: a signature here is worth nothing elsewhere.
    this.signingKey = createHmac('sha256', config.secretKey).update('herald settings csv import v1').digest();
  }

  @Get()
  async form(@Req() req: PageRequest, @Res() res: Response): Promise<void> {
    const session = requirePage(req);
    // The workspace's zone, its posting queue's, once it has slots; else the browser's (as the composer).
    const queue = await this.queue.getWorkspace(session.auth.workspaceId);
    await this.showForm(res, session, queue.slots.length > 0 ? queue.timezone : zoneOf(req, {}));
  }

  @Post()
  async preview(@Req() req: UploadRequest, @Res() res: Response, @Body() body: Record<string, unknown>): Promise<void> {
    const session = requirePage(req);
    const zone = zoneOf(req, body);
    if (req.uploadProblem) return this.showForm(res, session, zone, req.uploadProblem);
    if (!req.file) return this.showForm(res, session, zone, 'choose a CSV file first');
    const checked = await this.check(session, req.file.buffer, zone);
    if (!checked.ok) return this.showForm(res, session, zone, checked.problem);
    const okRows = checked.rows.filter((r) => r.ok).length;
    await this.pages.render(
      res,
      'import-preview',
      { title: 'Check the import', section: 'import', session },
      {
        rows: checked.rows,
        zone,
        total: checked.rows.length,
        okRows,
        badRows: checked.rows.length - okRows,
        csv: req.file.buffer.toString('base64'),
        sig: this.sign(session, zone, req.file.buffer),
      },
    );
  }

  @Post('confirm')
  async confirm(@Req() req: UploadRequest, @Res() res: Response, @Body() body: Record<string, unknown>): Promise<void> {
    const session = requirePage(req);
    const zone = zoneOf(req, body);
    const bytes = typeof body.csv === 'string' ? Buffer.from(body.csv, 'base64') : null;
    const sig = typeof body.sig === 'string' ? body.sig : '';
    if (req.uploadProblem || !bytes || !sameSecret(sig, this.sign(session, zone, bytes))) {
      return this.showForm(
        res,
        session,
        zone,
        'this import form was changed or belongs to another workspace; nothing was created: upload the file again',
      );
    }
    const checked = await this.check(session, bytes, zone);
    if (!checked.ok) return this.showForm(res, session, zone, checked.problem);
    const ready = checked.rows.filter((r) => r.ok);
    let created = 0;
    let replayed = false;
    try {
      for (let start = 0; start < ready.length; start += MAX_BATCH_POSTS) {
        const chunk = ready.slice(start, start + MAX_BATCH_POSTS);
        const posts = chunk.map((r) => r.item!);
        const key = `csv-import ${sig.slice(0, 43)} ${start / MAX_BATCH_POSTS}`;
        const answer = await this.batch.create(session.auth, posts, { posts }, key);
        replayed ||= answer.replayed;
        for (const result of answer.body.results) {
          const row = chunk[result.index];
          if (result.post) {
            row.post = { id: result.post.id, status: result.post.status };
            created++;
          } else {
            row.ok = false;
            row.problems = [result.error?.message ?? 'not created'];
          }
        }
      }
    } catch (err) {
      const known = personMessage(err);
      if (!known) throw err;
      // 409: the same file confirmed from two tabs at once; 422: this file was imported earlier
      // (within 24 hours) when other rows were ready (a time has passed since, an account was
      // renamed). What was created stays created; nothing is created twice.
      const message =
        known.status === 422
          ? 'this file was imported before (within the last 24 hours) with other rows ready; its posts are on the scheduled posts page. To import it again, change the file'
          : known.message;
      for (const row of ready.filter((r) => !r.post)) {
        row.ok = false;
        row.problems = [`not created: ${message}`];
      }
    }
    await this.pages.render(
      res,
      'import-done',
      { title: 'Import done', section: 'import', session },
      {
        created,
        replayed,
        createdRows: checked.rows.filter((r) => r.post),
        failedRows: checked.rows.filter((r) => !r.post),
        zone,
      },
    );
  }

  /** The file's verdicts: csv-import.ts's, then the API's DTO rules on each row's post (so the page keeps no copy of them). */
  private async check(
    session: PageSession,
    bytes: Buffer,
    zone: string,
  ): Promise<{ ok: false; problem: string } | { ok: true; rows: (RowView & { item?: ImportedPost })[] }> {
    const accounts = (await this.accounts.all(session.auth.workspaceId)).map((a) => ({
      id: a.id,
      name: a.name,
      provider: a.provider,
      config: a.config,
    }));
    const parsed = parseImport(bytes, { accounts, zone, now: new Date() });
    if (!parsed.ok) return parsed;
    const rows: (RowView & { item?: ImportedPost })[] = [];
    for (const r of parsed.rows) {
      const problems = [...r.problems];
      if (r.post) problems.push(...(await this.dtoProblems(r.post)));
      rows.push({ ...viewOf(r), ok: problems.length === 0, problems, ...(problems.length === 0 && r.post ? { item: r.post } : {}) });
    }
    return { ok: true, rows };
  }

  /** The API's own validation of the row's post (CreatePostDto), each message put under its column. */
  private async dtoProblems(post: ImportedPost): Promise<string[]> {
    try {
      await asDto(CreatePostDto, { ...post });
      return [];
    } catch (err) {
      const known = personMessage(err);
      if (!known) throw err;
      return known.message.split('; ').map((m) => {
        const field = /^[A-Za-z]+/.exec(m)?.[0] ?? '';
        const column = COLUMN_OF_FIELD[field];
        return column ? `${column}: ${m}` : m;
      });
    }
  }

  private sign(session: PageSession, zone: string, bytes: Buffer): string {
    const digest = createHash('sha256').update(bytes).digest('hex');
    return createHmac('sha256', this.signingKey).update(`${session.auth.workspaceId}\n${zone}\n${digest}`).digest('base64url');
  }

  private async showForm(res: Response, session: PageSession, zone: string, error?: string): Promise<void> {
    await this.pages.render(
      res,
      'import',
      { title: 'Import posts', section: 'import', session, status: error ? 400 : 200 },
      {
        error: error ?? null,
        zones: zoneOptions(zone),
        required: REQUIRED_COLUMNS.join(', '),
        optional: OPTIONAL_COLUMNS.join(', '),
        separator: ACCOUNT_SEPARATOR,
        maxRows: MAX_IMPORT_ROWS,
        maxMb: MAX_IMPORT_BYTES / 1_048_576,
      },
    );
  }
}

function viewOf(r: ImportRow): RowView {
  return {
    row: r.row,
    text: r.cells.text,
    accounts: r.cells.accounts,
    when: r.when ?? r.cells.time,
    link: r.cells.link,
    ok: r.problems.length === 0,
    problems: r.problems,
  };
}
