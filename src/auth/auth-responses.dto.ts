import { ApiProperty } from '@nestjs/swagger';
import { listOf, pageOf, timestamp } from '../common/response-schemas';
import { ROLES, Role } from '../domain/membership.model';

/** What the user, key and member endpoints answer, for OpenAPI. */

export class UserDto {
  @ApiProperty({ example: 'usr_0123456789abcdefghijklmno' })
  id: string;

  @ApiProperty()
  name: string;

  @ApiProperty({ type: 'string', nullable: true })
  email: string | null;

  @ApiProperty()
  isAdmin: boolean;

  @ApiProperty(timestamp())
  createdAt: string;
}

export class MeDto extends UserDto {
  @ApiProperty({ type: 'string', nullable: true, description: 'The API key of this request' })
  keyId: string | null;
}

export const UserPageDto = pageOf(UserDto, 'UserPageDto');

export class ApiKeyDto {
  @ApiProperty({ example: 'key_0123456789abcdefghijklmno' })
  id: string;

  @ApiProperty()
  name: string;

  @ApiProperty({ description: 'The first characters of the key, to recognise it by' })
  prefix: string;

  @ApiProperty(timestamp())
  createdAt: string;

  @ApiProperty(timestamp('When the key was last used (updated at most every few minutes)', true))
  lastUsedAt: string | null;

  @ApiProperty(timestamp('When the key was revoked', true))
  revokedAt: string | null;
}

export const ApiKeyListDto = listOf(ApiKeyDto, 'ApiKeyListDto');

export class IssuedApiKeyDto extends ApiKeyDto {
  @ApiProperty({ description: 'The key itself: shown this once, store it now' })
  key: string;
}

export class CreatedUserDto extends UserDto {
  @ApiProperty({ type: IssuedApiKeyDto, description: 'The first API key of the user' })
  apiKey: IssuedApiKeyDto;
}

export class MemberDto {
  @ApiProperty()
  userId: string;

  @ApiProperty({ enum: ROLES })
  role: Role;

  @ApiProperty(timestamp())
  createdAt: string;
}

export const MemberListDto = listOf(MemberDto, 'MemberListDto');
