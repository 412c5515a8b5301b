import axios, { AxiosError } from 'axios';
import * as http from 'node:http';
import * as https from 'node:https';
import * as net from 'node:net';
import { BLOCKED_ADDRESS_CODE, guardedLookup, isBlockedAddress } from '../../common/net/ssrf-guard';
import type { LinkedInResult } from './linkedin-outcome';

export interface LinkedInRequest {
  method: 'GET' | 'POST' | 'PUT';
  url: string;
  headers: Record<string, string>;
  body?: string | Buffer;
  signal?: AbortSignal;
}

/** Answers are small JSON; an upload answer has no body. Anything longer is not read. */
const MAX_RESPONSE_BYTES = 256 * 1024;

/**
 * axios with the SSRF guard in its agents' DNS lookup (checked at connect time, against DNS
 * rebinding) and for IP-literal hosts (Node skips `lookup` for those), no redirects, a total
 * timeout, and every status handed back as a result: LinkedIn's statuses are the connector's to
 * interpret. Never throws.
 */
export class LinkedInClient {
  private readonly httpAgent: http.Agent;
  private readonly httpsAgent: https.Agent;

  constructor(
    private readonly allowPrivate: boolean,
    private readonly timeoutMs: number,
  ) {
    const lookup = guardedLookup(allowPrivate);
    this.httpAgent = new http.Agent({ keepAlive: true, lookup });
    this.httpsAgent = new https.Agent({ keepAlive: true, lookup });
  }

  async send(req: LinkedInRequest): Promise<LinkedInResult> {
    let host: string;
    try {
      host = new URL(req.url).hostname.replace(/^\[|\]$/g, '');
    } catch {
      return { kind: 'network_error', code: 'invalid_url', message: 'the URL is not valid' };
    }
    if (!this.allowPrivate && net.isIP(host) !== 0 && isBlockedAddress(host)) {
      return { kind: 'network_error', code: 'blocked_address', message: `${host} is a private or reserved address (set HERALD_ALLOW_PRIVATE_URLS=true to allow it)` };
    }
    try {
      const res = await axios.request<string>({
        method: req.method,
        url: req.url,
        headers: req.headers,
        data: req.body,
        signal: req.signal,
        timeout: this.timeoutMs,
        maxRedirects: 0,
        maxContentLength: MAX_RESPONSE_BYTES,
        maxBodyLength: Infinity,
        responseType: 'text',
        transformResponse: (data: string) => data,
        validateStatus: () => true,
        proxy: false,
        httpAgent: this.httpAgent,
        httpsAgent: this.httpsAgent,
      });
      const headers: Record<string, string | string[] | undefined> = {};
      for (const [k, v] of Object.entries(res.headers as Record<string, unknown>)) {
        if (typeof v === 'string' || Array.isArray(v)) headers[k.toLowerCase()] = v as string | string[];
      }
      return { kind: 'response', status: res.status, headers, bodyText: typeof res.data === 'string' ? res.data : '' };
    } catch (err) {
      const e = err as AxiosError & { cause?: { code?: string } };
      const code = e.code === 'ECONNABORTED' || e.code === 'ETIMEDOUT' ? 'total_timeout' : (e.cause?.code ?? e.code ?? 'network_error');
      return { kind: 'network_error', code: code === BLOCKED_ADDRESS_CODE ? 'blocked_address' : code, message: e.message };
    }
  }

  close(): void {
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }
}
