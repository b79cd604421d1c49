import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsBoolean, IsEmail, IsIn, IsOptional, IsString, Length } from 'class-validator';
import { NoControlCharacters } from '../common/input-validation';
import { User } from '../domain/user.model';
import { ApiKey } from '../domain/api-key.model';
import type { IssuedKey } from './api-key.service';
import { Membership, ROLES, Role } from '../domain/membership.model';

const trim = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);

export class CreateApiKeyDto {
  @ApiPropertyOptional({ description: 'A label to recognise the key by', maxLength: 100, default: 'default' })
  @IsOptional()
  @Transform(trim)
  @IsString()
  @Length(1, 100)
  @NoControlCharacters()
  name?: string;
}

export class CreateUserDto {
  @ApiProperty({ description: 'Display name', minLength: 1, maxLength: 200 })
  @Transform(trim)
  @IsString()
  @Length(1, 200)
  @NoControlCharacters()
  name: string;

  @ApiPropertyOptional({ description: 'Contact e-mail' })
  @IsOptional()
  @IsEmail()
  email?: string;

  @ApiPropertyOptional({ description: 'Admins may create users', default: false })
  @IsOptional()
  @IsBoolean()
  isAdmin?: boolean;
}

export class SetMemberRoleDto {
  @ApiProperty({ enum: ROLES, description: 'viewer reads, editor also changes content, owner also shares and deletes' })
  @IsIn(ROLES)
  role: Role;
}

export const userView = (user: User) => ({
  id: user.id,
  name: user.name,
  email: user.email,
  isAdmin: user.isAdmin,
  createdAt: user.createdAt.toISOString(),
});

export const apiKeyView = (key: ApiKey) => ({
  id: key.id,
  name: key.name,
  prefix: key.prefix,
  createdAt: key.createdAt.toISOString(),
  lastUsedAt: key.lastUsedAt?.toISOString() ?? null,
  revokedAt: key.revokedAt?.toISOString() ?? null,
});

/** A key just issued: its view plus the secret, shown this once. */
export const issuedKeyView = ({ key, secret }: IssuedKey) => ({ ...apiKeyView(key), key: secret });

export const memberView = (m: Membership) => ({
  userId: m.userId,
  role: m.role,
  createdAt: m.createdAt.toISOString(),
});
