import { CollectionsFacade, NodeConfigurationError } from '../sdk';

/**
 * Gives nodes the collections of the user a run acts for. The ingestion side provides the real
 * one (bound to the access policy); until it is registered, nodes get a facade that says so.
 */
export abstract class NodeCollectionsProvider {
  abstract forUser(userId: string): CollectionsFacade;
}

export class UnavailableCollectionsProvider extends NodeCollectionsProvider {
  private readonly facade: CollectionsFacade = {
    listFiles: () => Promise.reject(unavailable()),
    getFileContent: () => Promise.reject(unavailable()),
  };

  forUser(): CollectionsFacade {
    return this.facade;
  }
}

const unavailable = () => new NodeConfigurationError('Collections are not available to workflow nodes in this deployment');
