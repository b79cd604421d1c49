import { createParamDecorator, ExecutionContext, SetMetadata } from '@nestjs/common';

/** Who is acting: the user behind the API key of the request (or the run, for workflow nodes). */
export interface Principal {
  userId: string;
  keyId: string | null;
  isAdmin: boolean;
}

export const PUBLIC_ROUTE = 'auth:public';
/** Marks a route that needs no API key (health, docs). */
export const Public = () => SetMetadata(PUBLIC_ROUTE, true);

export const CurrentPrincipal = createParamDecorator((_: unknown, ctx: ExecutionContext): Principal => {
  return ctx.switchToHttp().getRequest<{ principal: Principal }>().principal;
});
