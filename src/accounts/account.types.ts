import type { Provider } from '../connectors/connector.interface';
import { accountWarnings, WarningContext } from './account-warnings';
import type { AccountStatus } from '../account-state/account-state';
import type { RetryPolicyOverride } from '../retry/backoff';
import type { CircuitStateName } from '../retry/circuit-breaker';

/** An accounts row as the repository returns it. */
export interface AccountRow {
  id: string;
  workspaceId: string;
  provider: Provider;
  name: string;
  status: AccountStatus;
  statusReason: string | null;
  config: Record<string, unknown>;
  credentials: string;
  credentialsVersion: number;
  retryPolicy: RetryPolicyOverride | null;
  maxInFlight: number;
  circuitState: CircuitStateName;
  circuitOpenUntil: Date | null;
  consecutiveFailures: number;
  lastError: string | null;
  lastSuccessAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

/** The account as the API shows it: never the credentials. */
export interface AccountView {
  id: string;
  provider: Provider;
  name: string;
  status: AccountStatus;
  statusReason: string | null;
  config: Record<string, unknown>;
  circuit: { state: CircuitStateName; openUntil: string | null; consecutiveFailures: number };
  retryPolicy: RetryPolicyOverride | null;
  maxInFlight: number;
  lastError: string | null;
  lastSuccessAt: string | null;
  createdAt: string;
  /** Things to act on, e.g. a token about to expire that cannot be refreshed. */
  warnings: string[];
}

export function toAccountView(a: AccountRow, ctx: WarningContext): AccountView {
  return {
    id: a.id,
    provider: a.provider,
    name: a.name,
    status: a.status,
    statusReason: a.statusReason,
    config: a.config,
    circuit: {
      state: a.circuitState,
      openUntil: a.circuitOpenUntil?.toISOString() ?? null,
      consecutiveFailures: a.consecutiveFailures,
    },
    retryPolicy: a.retryPolicy,
    maxInFlight: a.maxInFlight,
    lastError: a.lastError,
    lastSuccessAt: a.lastSuccessAt?.toISOString() ?? null,
    createdAt: a.createdAt.toISOString(),
    warnings: accountWarnings(a.provider, a.config, ctx),
  };
}

/** An account's health as the digest and the alerts report it (never its credentials). */
export interface AccountHealthRow {
  id: string;
  workspaceId: string;
  name: string;
  provider: Provider;
  status: AccountStatus;
  statusReason: string | null;
  config: Record<string, unknown>;
  circuitOpenedAt: Date | null;
  consecutiveFailures: number;
  lastError: string | null;
  deleted: boolean;
}

/** What a delivery needs of its account: its public settings and its sealed credentials at their version. */
export interface DeliveryAccountRow {
  id: string;
  workspaceId: string;
  name: string;
  config: Record<string, unknown>;
  credentials: string;
  credentialsVersion: number;
}
