import type { Membership, ResourceType, Role } from './membership.model';

export abstract class MembershipStore {
  abstract getRole(resourceType: ResourceType, resourceId: string, userId: string): Promise<Role | null>;
  /** Inserts or replaces the user's role on the resource. */
  abstract setRole(membership: Membership): Promise<void>;
  /** Returns false when the user had no role. */
  abstract remove(resourceType: ResourceType, resourceId: string, userId: string): Promise<boolean>;
  abstract list(resourceType: ResourceType, resourceId: string): Promise<Membership[]>;
  /** Ids of the resources of this type the user holds any role on, with that role. */
  abstract listForUser(resourceType: ResourceType, userId: string): Promise<Map<string, Role>>;
}
