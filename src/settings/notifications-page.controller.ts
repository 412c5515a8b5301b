import { Body, Controller, Get, Inject, Post, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import * as path from 'node:path';
import { HERALD_CONFIG, HeraldConfig } from '../config/config';
import { CONFIRMATIONS_PER_DAY } from '../notifications/mail-limits';
import { UpdateNotificationSettingsDto } from '../notifications/notification-settings.dto';
import { NotificationSettingsService } from '../notifications/notification-settings.service';
import { Public } from '../workspaces/auth';
import { asDto, personMessage } from './form-validation';
import { PageExceptionFilter } from './page-exception.filter';
import { field, rawField } from './page-input';
import { PageRenderer } from './page-renderer';
import { PageRequest, requirePage } from './session/page-request';
import { PageSessionGuard } from './session/page-session.guard';
import type { PageSession } from '../people/session.types';

interface FormValues {
  enabled: boolean;
  recipients: string;
  hour: number;
  timezone: string;
  sendWhenEmpty: boolean;
  alerts: boolean;
}

/** Every IANA zone this Node knows, for the time zone list (the service still checks the choice). */
const TIME_ZONES: readonly string[] = (() => {
  const supported = (Intl as { supportedValuesOf?: (key: string) => string[] }).supportedValuesOf?.('timeZone') ?? [];
  return supported.includes('UTC') ? supported : ['UTC', ...supported];
})();

/**
 * The digest and alert settings of the workspace, through NotificationSettingsService (the same
 * rules as `PUT /v1/settings/notifications`), a preview of the digest as it would go out now, and
 * a banner when no mail server is configured (mail goes to .eml files instead).
 */
@ApiExcludeController()
@Public()
@UseGuards(PageSessionGuard)
@UseFilters(PageExceptionFilter)
@Controller('settings/notifications')
export class NotificationsPageController {
  constructor(
    @Inject(HERALD_CONFIG) private readonly config: HeraldConfig,
    private readonly pages: PageRenderer,
    private readonly notifications: NotificationSettingsService,
  ) {}

  @Get()
  async show(@Req() req: PageRequest, @Res() res: Response): Promise<void> {
    const session = requirePage(req);
    const current = await this.notifications.get(session.auth.workspaceId);
    await this.showForm(res, session, {
      enabled: current.digest.enabled,
      recipients: current.digest.recipients.join('\n'),
      hour: current.digest.hour,
      timezone: current.digest.timezone,
      sendWhenEmpty: current.digest.sendWhenEmpty,
      alerts: current.alerts.enabled,
    });
  }

  @Post()
  async save(@Req() req: PageRequest, @Res() res: Response, @Body() body: Record<string, unknown>): Promise<void> {
    const session = requirePage(req);
    // Unchecked boxes send nothing: the form always carries every field, so absent means off.
    const values: FormValues = {
      enabled: field(body, 'enabled') === 'yes',
      recipients: rawField(body, 'recipients'),
      hour: Number(field(body, 'hour')),
      timezone: field(body, 'timezone'),
      sendWhenEmpty: field(body, 'sendWhenEmpty') === 'yes',
      alerts: field(body, 'alerts') === 'yes',
    };
    const recipients = values.recipients
      .split(/[\n,;]+/)
      .map((r) => r.trim())
      .filter((r) => r !== '');
    try {
      const dto = await asDto(UpdateNotificationSettingsDto, {
        digest: { enabled: values.enabled, recipients, hour: values.hour, timezone: values.timezone, sendWhenEmpty: values.sendWhenEmpty },
        alerts: { enabled: values.alerts },
      });
      const saved = await this.notifications.update(session.auth, dto);
      const when = `${String(saved.digest.hour).padStart(2, '0')}:00 ${saved.digest.timezone}`;
      const unconfirmed = saved.recipientStatus.filter((r) => r.status !== 'confirmed').length;
      const pendingNote =
        unconfirmed > 0
          ? ` ${unconfirmed} address${unconfirmed === 1 ? ' has' : 'es have'} not confirmed yet: nothing goes to ${unconfirmed === 1 ? 'it' : 'them'} until the mailed link is used.`
          : '';
      await this.pages.redirect(res, session, '/settings/notifications', {
        tone: 'success',
        text:
          (saved.digest.enabled
            ? `Saved. The digest goes to ${saved.digest.recipients.length} recipient${saved.digest.recipients.length === 1 ? '' : 's'} every day at ${when}.`
            : 'Saved. The daily digest is off.') + pendingNote,
      });
    } catch (err) {
      const known = personMessage(err);
      if (!known) throw err;
      await this.showForm(res, session, values, known.message, known.status);
    }
  }

  /** The digest as it would be sent now (nothing is sent or recorded). */
  @Post('preview')
  async preview(@Req() req: PageRequest, @Res() res: Response): Promise<void> {
    const session = requirePage(req);
    const preview = await this.notifications.preview(session.auth.workspaceId);
    await this.pages.render(res, 'notifications-preview', { title: 'Digest preview', section: 'notifications', session }, { preview });
  }

  private async showForm(res: Response, session: PageSession, values: FormValues, error?: string, status = 400): Promise<void> {
    const current = await this.notifications.get(session.auth.workspaceId);
    await this.pages.render(
      res,
      'notifications',
      { title: 'Notifications', section: 'notifications', session, status: error ? status : 200 },
      {
        values,
        error,
        outbox: current.delivery === 'outbox',
        outboxDir: path.join(this.config.dataDir, 'outbox'),
        lastDigest: current.lastDigest,
        recipientStatus: current.recipientStatus,
        alertLimits: current.alertLimits,
        confirmationsPerDay: CONFIRMATIONS_PER_DAY,
        hours: Array.from({ length: 24 }, (_, h) => ({ value: h, label: `${String(h).padStart(2, '0')}:00`, selected: h === values.hour })),
        zones: TIME_ZONES.map((z) => ({ value: z, selected: z === values.timezone })),
        zoneKnown: TIME_ZONES.includes(values.timezone),
      },
    );
  }
}
