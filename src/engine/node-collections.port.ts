import { CollectionsFacade, NodeConfigurationError } from '../sdk';

/**
 * Gives nodes the collections of the user a run acts for. The collections side registers the real
 * one globally (RunCollectionsModule, bound to the access policy); without it, as in engine unit
 * tests, nodes get a facade that says collections are unavailable.
 */
export abstract class NodeCollectionsProvider {
  abstract forUser(userId: string): CollectionsFacade;
}

export class UnavailableCollectionsProvider extends NodeCollectionsProvider {
  private readonly facade: CollectionsFacade = {
    listCollections: () => Promise.reject(unavailable()),
    listFiles: () => Promise.reject(unavailable()),
    getFileContent: () => Promise.reject(unavailable()),
    search: () => Promise.reject(unavailable()),
    addFile: () => Promise.reject(unavailable()),
  };

  forUser(): CollectionsFacade {
    return this.facade;
  }
}

const unavailable = () => new NodeConfigurationError('Collections are not available to workflow nodes in this deployment');
