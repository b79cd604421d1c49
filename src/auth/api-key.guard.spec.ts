import 'reflect-metadata';
import { ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ApiKeyGuard } from './api-key.guard';
import { ApiKeyService } from './api-key.service';
import { Principal, Public } from './principal';

class Open {
  @Public()
  health() {}

  guarded() {}
}

@Public()
class AllOpen {
  anything() {}
}

const principal: Principal = { userId: 'usr_1', keyId: 'key_1', isAdmin: false };

function contextOf(controller: object, handler: object, headers: Record<string, string> = {}) {
  const request: { headers: Record<string, string>; principal?: Principal } = { headers };
  const context = {
    getHandler: () => handler,
    getClass: () => controller,
    switchToHttp: () => ({ getRequest: () => request }),
  } as unknown as ExecutionContext;
  return { context, request };
}

describe('ApiKeyGuard', () => {
  const reflector = new Reflector();
  const authenticate = jest.fn(async (secret: string | undefined) => {
    if (secret !== 'wcs_good') throw new Error('refused');
    return principal;
  });
  const guard = new ApiKeyGuard(reflector, { authenticate } as unknown as ApiKeyService);

  it('lets public routes through without a key and checks the key of every other request', async () => {
    for (let i = 0; i < 2; i++) {
      await expect(guard.canActivate(contextOf(Open, Open.prototype.health).context)).resolves.toBe(true);
      await expect(guard.canActivate(contextOf(AllOpen, AllOpen.prototype.anything).context)).resolves.toBe(true);
      await expect(guard.canActivate(contextOf(Open, Open.prototype.guarded).context)).rejects.toThrow('refused');
      const { context, request } = contextOf(Open, Open.prototype.guarded, { 'x-api-key': 'wcs_good' });
      await expect(guard.canActivate(context)).resolves.toBe(true);
      expect(request.principal).toBe(principal);
    }
    expect(authenticate).toHaveBeenCalledTimes(4);
  });

  it("reads a route's decorators once, not on every request", async () => {
    const read = jest.spyOn(reflector, 'getAllAndOverride');
    class Fresh {
      @Public()
      open() {}
    }
    for (let i = 0; i < 3; i++) await guard.canActivate(contextOf(Fresh, Fresh.prototype.open).context);
    expect(read).toHaveBeenCalledTimes(1);
  });
});
