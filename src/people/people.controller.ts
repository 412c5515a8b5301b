import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiNoContentResponse, ApiOperation, ApiParam, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { Auth, AuthContext } from '../access/auth-context';
import { API_KEY_SCHEME, ApiErrors, ApiPageResponse, ApiV1Errors, BODY_ERRORS } from '../common/openapi';
import { PageQuery } from '../common/pagination';
import { ParseIdPipe } from '../common/parse-id.pipe';
import { FirstPersonService } from './first-person.service';
import { InvitationDto, NewInvitationDto, PasswordResetSentDto, PersonDto } from './people-view.dto';
import { CreateFirstPersonDto, CreateInvitationDto, UpdatePersonDto } from './people.dto';
import { PeopleService } from './people.service';
import type { NewInvitationView, PersonView } from './person.types';

const personId = new ParseIdPipe('person');
const ID = { name: 'id', format: 'uuid', description: "the person's id" } as const;

@ApiTags('people')
@ApiBearerAuth(API_KEY_SCHEME)
@ApiV1Errors()
@Controller('v1')
export class PeopleController {
  constructor(
    private readonly people: PeopleService,
    private readonly firstPerson: FirstPersonService,
  ) {}

  @Get('people')
  @ApiOperation({ operationId: 'listPeople', summary: 'The people of the workspace, newest first' })
  @ApiPageResponse(PersonDto)
  @ApiErrors([400])
  list(@Auth() auth: AuthContext, @Query() query: PageQuery) {
    return this.people.list(auth.workspaceId, query.limit, query.cursor);
  }

  @Post('people')
  @ApiOperation({
    operationId: 'createFirstPerson',
    summary: "Add the workspace's first person (an owner) with a password; they log in once a link confirms the address",
    description:
      'An address becomes a login only once its mailbox is proven: the answer is 202 and a one-use link (7 days) goes to the ' +
      'address; the person exists, and logs in with this password, once it is used. Without a mail server (SMTP_URL unset) the ' +
      "link is in the answer for you to pass on, as invitations' are, and the very first person of the server is made at once " +
      '(201). The answer never tells whether the address logs in elsewhere on this Herald: only its mailbox learns that, on the ' +
      'page the link opens. Later people join by invitation.',
  })
  @ApiResponse({
    status: 202,
    description:
      'The first person waits for their address to be confirmed: an open owner invitation (`firstPerson: true`, in GET /v1/invitations), its link mailed (`link` null) or, without a mail server, in `link`. Adding another first person replaces it.',
    type: NewInvitationDto,
  })
  @ApiResponse({
    status: 201,
    description: 'The person, who can log in now: only the very first person of a server without a mail server',
    type: PersonDto,
  })
  @ApiErrors([...BODY_ERRORS, 409], { 409: 'The workspace has people already: invite the next ones.' })
  async createFirst(
    @Auth() auth: AuthContext,
    @Body() body: CreateFirstPersonDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<PersonView | NewInvitationView> {
    const outcome = await this.firstPerson.createFirst(auth, body);
    if ('created' in outcome) return outcome.created;
    res.status(202);
    return outcome.pending;
  }

  @Patch('people/:id')
  @ApiOperation({ operationId: 'updatePerson', summary: "Change a person's role or name; they see it at their next request" })
  @ApiParam(ID)
  @ApiResponse({ status: 200, description: 'The person as they are now', type: PersonDto })
  @ApiErrors([...BODY_ERRORS, 404, 409], { 409: "The workspace's last owner cannot stop being one." })
  update(@Auth() auth: AuthContext, @Param('id', personId) id: string, @Body() body: UpdatePersonDto) {
    return this.people.update(auth, id, body);
  }

  @Delete('people/:id')
  @HttpCode(204)
  @ApiOperation({ operationId: 'removePerson', summary: 'Remove a person: they cannot log in any more, and their open pages end now' })
  @ApiParam(ID)
  @ApiNoContentResponse({ description: 'Removed' })
  @ApiErrors([404, 409], { 409: "The workspace's last owner cannot be removed." })
  async remove(@Auth() auth: AuthContext, @Param('id', personId) id: string): Promise<void> {
    await this.people.remove(auth, id);
  }

  @Post('people/:id/password-reset')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'sendPasswordReset',
    summary: 'Mail the person a one-use link (1 hour) to set a new password; using it ends their other sessions',
  })
  @ApiParam(ID)
  @ApiResponse({ status: 200, description: 'The link is on its way', type: PasswordResetSentDto })
  @ApiErrors([404])
  sendReset(@Auth() auth: AuthContext, @Param('id', personId) id: string) {
    return this.people.sendReset(auth, id);
  }

  @Get('invitations')
  @ApiOperation({
    operationId: 'listInvitations',
    summary: 'Open invitations (not used or withdrawn yet; expired ones say so), newest first',
  })
  @ApiPageResponse(InvitationDto)
  @ApiErrors([400])
  listInvitations(@Auth() auth: AuthContext, @Query() query: PageQuery) {
    return this.people.listInvitations(auth.workspaceId, query.limit, query.cursor);
  }

  @Post('invitations')
  @ApiOperation({
    operationId: 'createInvitation',
    summary: 'Invite an address with a role: a one-use link valid 7 days, mailed (or in the answer when no mail server is configured)',
  })
  @ApiResponse({ status: 201, description: 'The invitation', type: NewInvitationDto })
  @ApiErrors([...BODY_ERRORS, 409], { 409: 'The address is already in this workspace.' })
  invite(@Auth() auth: AuthContext, @Body() body: CreateInvitationDto) {
    return this.people.invite(auth, body);
  }

  @Delete('invitations/:id')
  @HttpCode(204)
  @ApiOperation({ operationId: 'revokeInvitation', summary: 'Withdraw an invitation: its link stops working' })
  @ApiParam({ name: 'id', format: 'uuid', description: "the invitation's id" })
  @ApiNoContentResponse({ description: 'Withdrawn' })
  @ApiErrors([404, 409], { 409: 'The invitation was accepted already.' })
  async revokeInvitation(@Auth() auth: AuthContext, @Param('id', new ParseIdPipe('invitation')) id: string): Promise<void> {
    await this.people.revokeInvitation(auth, id);
  }
}
