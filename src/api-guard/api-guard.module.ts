import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { PeopleModule } from '../people/people.module';
import { WorkspacesModule } from '../workspaces/workspaces.module';
import { ApiKeyGuard } from './api-key.guard';

/**
 * The API's front door: ApiKeyGuard, the global guard every route passes (APP_GUARD).
 *
 * It has a module of its own, above workspaces and people, because it needs both: the keys are
 * workspaces' (ApiKeysService) and the count of wrong keys is the login throttle, which is
 * people's (one count for the page's logins and the API's Bearer keys). In workspaces it would
 * import people, and people already imports workspaces (an inviter's API key, the workspace a
 * mail names, the keys a page session may be opened with): a cycle. At the app level (src/*.ts, which may import
 * anything) nothing would hold it to what it uses; here architecture.json lists its uses and
 * the lint enforces them.
 */
@Module({
  imports: [WorkspacesModule, PeopleModule],
  providers: [{ provide: APP_GUARD, useClass: ApiKeyGuard }],
})
export class ApiGuardModule {}
