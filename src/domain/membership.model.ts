/**
 * Roles are granted on any shareable resource (collections, workflows, credentials) through one
 * table, so one access policy serves every resource type. On a credential, viewer means it may be
 * used (selected in a node), editor that it may be changed.
 */
export const ROLES = ['viewer', 'editor', 'owner'] as const;
export type Role = (typeof ROLES)[number];
export type ResourceType = 'collection' | 'workflow' | 'credential';

export interface Membership {
  resourceType: ResourceType;
  resourceId: string;
  userId: string;
  role: Role;
  createdAt: Date;
}
