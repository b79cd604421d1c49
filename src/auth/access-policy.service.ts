import { Injectable } from '@nestjs/common';
import { AppError } from '../common/app-error';
import { MembershipStore } from '../domain/membership-store.port';
import { ResourceType, Role, ROLES } from '../domain/membership.model';
import { Principal } from './principal';

const rank = (role: Role): number => ROLES.indexOf(role);

export const roleAtLeast = (role: Role | null, minimum: Role): boolean => role !== null && rank(role) >= rank(minimum);

/**
 * The one role check for every shareable resource. No role at all answers "not found" so that
 * existence is not leaked; a role below the one required answers "forbidden".
 */
@Injectable()
export class AccessPolicy {
  constructor(private readonly memberships: MembershipStore) {}

  async require(principal: Pick<Principal, 'userId'>, type: ResourceType, id: string, minimum: Role): Promise<Role> {
    return this.check(await this.memberships.getRole(type, id, principal.userId), type, id, minimum);
  }

  /** `require` of a role read with something else (WorkflowStore.startable reads it with the workflow). */
  check(role: Role | null, type: ResourceType, id: string, minimum: Role): Role {
    if (role === null) throw AppError.notFound(type, id);
    if (!roleAtLeast(role, minimum)) {
      throw AppError.forbidden(`This needs the ${minimum} role on ${type} ${id}; you are ${role}`);
    }
    return role;
  }
}
