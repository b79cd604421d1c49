import { Page, PageRequest } from '../common/page';
import type { Credential, VisibleCredential } from './credential.model';

/** Credentials and their sealed secrets; who may use or edit one is a membership, as for collections. */
export abstract class CredentialStore {
  /** Creates the credential and makes its creator the owner. */
  abstract create(credential: Credential): Promise<void>;
  abstract get(id: string): Promise<Credential | null>;
  /** Credentials the user holds a role on, newest first. */
  abstract listVisible(userId: string, page: PageRequest): Promise<Page<VisibleCredential>>;
  /** Replaces name, settings and sealed secrets; false when it does not exist. */
  abstract update(id: string, changes: Pick<Credential, 'name' | 'settings' | 'sealed' | 'updatedAt'>): Promise<boolean>;
  /** Removes the credential and its memberships; false when it did not exist. */
  abstract delete(id: string): Promise<boolean>;
}
