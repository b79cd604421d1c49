import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ApiKeyService, presentedKey } from './api-key.service';
import { Principal, PUBLIC_ROUTE } from './principal';

/** Global guard: every route needs a valid API key unless marked @Public(). */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  /**
   * Whether a route is public, by handler and then by controller class (a handler a subclass
   * inherits serves two classes): decorators are read once per route, not on every request.
   */
  private readonly publicRoutes = new WeakMap<object, WeakMap<object, boolean>>();

  constructor(
    private readonly reflector: Reflector,
    private readonly apiKeys: ApiKeyService,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (this.isPublic(context.getHandler(), context.getClass())) return true;
    const request = context.switchToHttp().getRequest<{ headers: Record<string, string>; principal?: Principal }>();
    request.principal = await this.apiKeys.authenticate(presentedKey(request.headers));
    return true;
  }

  private isPublic(handler: object, controller: object): boolean {
    let byClass = this.publicRoutes.get(handler);
    if (!byClass) this.publicRoutes.set(handler, (byClass = new WeakMap()));
    let isPublic = byClass.get(controller);
    if (isPublic === undefined) {
      isPublic =
        this.reflector.getAllAndOverride<boolean | undefined>(PUBLIC_ROUTE, [handler as () => void, controller as () => void]) === true;
      byClass.set(controller, isPublic);
    }
    return isPublic;
  }
}
