/**
 * Roles are granted on any shareable resource (collections, workflows) through one table,
 * so one access policy serves every resource type.
 */
export const ROLES = ['viewer', 'editor', 'owner'] as const;
export type Role = (typeof ROLES)[number];
export type ResourceType = 'collection' | 'workflow';

export interface Membership {
  resourceType: ResourceType;
  resourceId: string;
  userId: string;
  role: Role;
  createdAt: Date;
}
