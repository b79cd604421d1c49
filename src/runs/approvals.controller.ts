import { Body, Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiOkResponse, ApiResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, Principal } from '../auth/principal';
import { ApprovalDecisionDto, DecideApprovalDto, PendingApprovalListDto } from './approvals.dto';
import { ApprovalsService } from './approvals.service';

@ApiTags('approvals')
@ApiSecurity('api-key')
@Controller('api/v1')
export class ApprovalsController {
  constructor(private readonly approvals: ApprovalsService) {}

  /** The inbox: approval nodes waiting for a decision on workflows where the caller holds the editor role, oldest first. */
  @Get('approvals')
  @ApiOkResponse({ type: PendingApprovalListDto })
  async inbox(@CurrentPrincipal() principal: Principal) {
    return { items: await this.approvals.inbox(principal) };
  }

  /** Decides an approval node the run waits at: the run goes on through the `approved` or `rejected` output. */
  @Post('runs/:id/approvals/:nodeId')
  @HttpCode(200)
  @ApiOkResponse({ type: ApprovalDecisionDto, description: 'Decided; the run goes on' })
  @ApiResponse({ status: 400, description: "The fields do not match the node's schema (each bad field named)" })
  @ApiResponse({ status: 403, description: 'Deciding needs the editor or owner role' })
  @ApiResponse({ status: 409, description: 'Already decided, or the run no longer waits there' })
  @ApiResponse({ status: 410, description: 'The approval timed out' })
  decide(
    @CurrentPrincipal() principal: Principal,
    @Param('id') runId: string,
    @Param('nodeId') nodeId: string,
    @Body() body: DecideApprovalDto,
  ) {
    return this.approvals.decideAsUser(principal, runId, nodeId, body);
  }
}
