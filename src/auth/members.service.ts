import { Injectable } from '@nestjs/common';
import { AppError } from '../common/app-error';
import { Membership, ResourceType, Role } from '../domain/membership.model';
import { MembershipStore } from '../domain/membership-store.port';
import { UserStore } from '../domain/user-store.port';
import { AccessPolicy } from './access-policy.service';
import { Principal } from './principal';

/** Sharing of any resource type: only owners manage members, and a resource never loses its last owner. */
@Injectable()
export class MembersService {
  constructor(
    private readonly memberships: MembershipStore,
    private readonly users: UserStore,
    private readonly access: AccessPolicy,
  ) {}

  async list(principal: Principal, type: ResourceType, id: string): Promise<Membership[]> {
    await this.access.require(principal, type, id, 'viewer');
    return this.memberships.list(type, id);
  }

  async set(principal: Principal, type: ResourceType, id: string, userId: string, role: Role): Promise<Membership> {
    await this.access.require(principal, type, id, 'owner');
    if (!(await this.users.getUser(userId))) throw AppError.notFound('user', userId);
    const current = await this.memberships.getRole(type, id, userId);
    if (current === 'owner' && role !== 'owner') await this.ensureAnotherOwner(type, id, userId);
    const membership: Membership = { resourceType: type, resourceId: id, userId, role, createdAt: new Date() };
    await this.memberships.setRole(membership);
    return membership;
  }

  async remove(principal: Principal, type: ResourceType, id: string, userId: string): Promise<void> {
    await this.access.require(principal, type, id, 'owner');
    const current = await this.memberships.getRole(type, id, userId);
    if (current === null) throw AppError.notFound('member', userId);
    if (current === 'owner') await this.ensureAnotherOwner(type, id, userId);
    await this.memberships.remove(type, id, userId);
  }

  private async ensureAnotherOwner(type: ResourceType, id: string, leavingUserId: string): Promise<void> {
    const owners = (await this.memberships.list(type, id)).filter((m) => m.role === 'owner');
    if (owners.every((m) => m.userId === leavingUserId)) {
      throw AppError.conflict(`${type} ${id} must keep at least one owner`);
    }
  }
}
