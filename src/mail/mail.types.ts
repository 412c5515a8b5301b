import type { MailKind } from './mail-driver';

export interface NewMail {
  workspaceId: string;
  kind: MailKind;
  recipients: string[];
  subject: string;
  html: string;
  text: string;
}

export interface MailState {
  status: 'pending' | 'sending' | 'sent' | 'failed';
  attempts: number;
  sentAt: Date | null;
  lastError: string | null;
}
