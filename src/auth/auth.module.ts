import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { AccessPolicy } from './access-policy.service';
import { ApiKeyGuard } from './api-key.guard';
import { ApiKeyService } from './api-key.service';
import { AuthController } from './auth.controller';
import { MembersService } from './members.service';
import { UsersService } from './users.service';
import { StorageModule } from '../storage/storage.module';

@Module({
  imports: [StorageModule],
  controllers: [AuthController],
  providers: [ApiKeyService, UsersService, AccessPolicy, MembersService, { provide: APP_GUARD, useClass: ApiKeyGuard }],
  exports: [ApiKeyService, UsersService, AccessPolicy, MembersService],
})
export class AuthModule {}
