import { Page, PageRequest } from '../common/page';
import type { Credential, CredentialUse, VisibleCredential } from './credential.model';

/** Credentials and their sealed secrets; who may use or edit one is a membership, as for collections. */
export abstract class CredentialStore {
  /** Creates the credential and makes its creator the owner. */
  abstract create(credential: Credential): Promise<void>;
  abstract get(id: string): Promise<Credential | null>;
  /** Credentials the user holds a role on, newest first. */
  abstract listVisible(userId: string, page: PageRequest): Promise<Page<VisibleCredential>>;
  /** Replaces name, settings, allowed hosts and sealed secrets; false when it does not exist. */
  abstract update(id: string, changes: Pick<Credential, 'name' | 'settings' | 'allowedHosts' | 'sealed' | 'updatedAt'>): Promise<boolean>;
  /** Removes the credential, its memberships and its uses; false when it did not exist. */
  abstract delete(id: string): Promise<boolean>;
  abstract recordUse(use: CredentialUse): Promise<void>;
  /** Its uses, newest first. */
  abstract listUses(credentialId: string, page: PageRequest): Promise<Page<CredentialUse>>;
}
