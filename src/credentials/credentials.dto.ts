import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsIn, IsOptional, IsString, Length, Matches, ValidateBy } from 'class-validator';
import { ROLES, Role } from '../domain/membership.model';
import { trimmed } from '../common/input-validation';
import { pageOf, timestamp } from '../common/response-schemas';
import {
  Credential,
  CREDENTIAL_TYPES,
  CREDENTIAL_USE_KINDS,
  CredentialType,
  CredentialUse,
  CredentialUseKind,
} from '../domain/credential.model';

export const MAX_CREDENTIAL_NAME_CHARS = 200;
/** A secret longer than this is no API key or password: a body pasted by mistake. */
const MAX_FIELD_CHARS = 8192;

/** An object of at most 16 string values, each 1 to MAX_FIELD_CHARS characters. */
function IsStringRecord(): PropertyDecorator {
  return ValidateBy({
    name: 'isStringRecord',
    validator: {
      validate: (value: unknown) =>
        typeof value === 'object' &&
        value !== null &&
        !Array.isArray(value) &&
        Object.keys(value).length <= 16 &&
        Object.values(value).every((v) => typeof v === 'string' && v.length >= 1 && v.length <= MAX_FIELD_CHARS),
      defaultMessage: (args) =>
        `${args?.property} must be an object of at most 16 non-empty strings (${MAX_FIELD_CHARS} characters at most each)`,
    },
  });
}

const typesHelp =
  'bearer: secrets {token}; basic: settings {username}, secrets {password}; header: settings {name}, secrets {value}; ' +
  'query: settings {name}, secrets {value}; oauth2-client-credentials: settings {tokenUrl, clientId, scope?, audience?}, secrets {clientSecret}';

const MAX_ALLOWED_HOSTS = 20;
/** A host name or IP address in lower case, with an optional port: what `new URL(...).host` gives. */
const HOST_PATTERN = /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*|\[[0-9a-f:.]+\])(?::\d{1,5})?$/;
const HOST_MESSAGE = 'each allowed host must be a host name in lower case, with an optional port (api.example.com, 127.0.0.1:8080)';

const ALLOWED_HOSTS_HELP =
  'The hosts (host or host:port, as in a URL) its values may be sent to; a request to any other host is refused before it is sent. ' +
  "Left empty, the owner's first use adopts that use's host. Allowing another host needs the secrets again.";

/** `allowedHosts` as create and update take it. */
const AllowedHostsProperty = () =>
  applyDecorators(
    ApiPropertyOptional({ type: [String], description: ALLOWED_HOSTS_HELP, example: ['api.example.com'] }),
    IsOptional(),
    IsArray(),
    ArrayMaxSize(MAX_ALLOWED_HOSTS),
    Matches(HOST_PATTERN, { each: true, message: HOST_MESSAGE }),
  );

export class CreateCredentialDto {
  @ApiProperty({ description: `1 to ${MAX_CREDENTIAL_NAME_CHARS} characters after trimming` })
  @Transform(trimmed)
  @IsString()
  @Length(1, MAX_CREDENTIAL_NAME_CHARS)
  name: string;

  @ApiProperty({ enum: CREDENTIAL_TYPES, description: typesHelp })
  @IsIn(CREDENTIAL_TYPES)
  type: CredentialType;

  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'string' }, description: 'The visible fields of the type' })
  @IsOptional()
  @IsStringRecord()
  settings?: Record<string, string>;

  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'string' },
    description: 'The secret fields of the type: write-only, never returned',
  })
  @IsStringRecord()
  secrets: Record<string, string>;

  @AllowedHostsProperty()
  allowedHosts?: string[];
}

/** Rename, change settings, or rotate: secrets given replace the stored ones (all of them, as a set). */
export class UpdateCredentialDto {
  @ApiPropertyOptional()
  @IsOptional()
  @Transform(trimmed)
  @IsString()
  @Length(1, MAX_CREDENTIAL_NAME_CHARS)
  name?: string;

  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'string' } })
  @IsOptional()
  @IsStringRecord()
  settings?: Record<string, string>;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string' },
    description: 'New secret fields (rotation); write-only. Needed too to change where a secret goes: `tokenUrl`, or another allowed host',
  })
  @IsOptional()
  @IsStringRecord()
  secrets?: Record<string, string>;

  @AllowedHostsProperty()
  allowedHosts?: string[];
}

export const credentialView = (credential: Credential, role: Role, secretFields: readonly string[]) => ({
  id: credential.id,
  name: credential.name,
  type: credential.type,
  settings: credential.settings,
  allowedHosts: credential.allowedHosts,
  secretFields: [...secretFields],
  role,
  createdAt: credential.createdAt.toISOString(),
  updatedAt: credential.updatedAt.toISOString(),
});

export class CredentialDto {
  @ApiProperty({ example: 'crd_0123456789abcdefghijklmno' })
  id: string;

  @ApiProperty()
  name: string;

  @ApiProperty({ enum: CREDENTIAL_TYPES })
  type: CredentialType;

  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' }, description: 'The visible fields' })
  settings: Record<string, string>;

  @ApiProperty({ type: [String], description: 'The hosts its values may be sent to (empty: none yet, see allowedHosts on create)' })
  allowedHosts: string[];

  @ApiProperty({ type: [String], description: 'The names of the secret fields it holds; their values are never returned' })
  secretFields: string[];

  @ApiProperty({ enum: ROLES, description: 'Your role: viewer may use it in a node, editor may change it, owner shares and deletes it' })
  role: Role;

  @ApiProperty(timestamp())
  createdAt: string;

  @ApiProperty(timestamp())
  updatedAt: string;
}

export const CredentialPageDto = pageOf(CredentialDto, 'CredentialPageDto');

export class CredentialUseDto {
  @ApiProperty()
  workflowId: string;

  @ApiProperty()
  name: string;

  @ApiProperty({ description: 'The draft names it' })
  inDraft: boolean;

  @ApiProperty({ description: 'The active published version names it' })
  inActiveVersion: boolean;
}

export class CredentialUsageDto {
  @ApiProperty({ type: [CredentialUseDto], description: 'The workflows you can see that name the credential' })
  items: CredentialUseDto[];

  @ApiProperty({ type: 'integer', description: 'Workflows you cannot see that name it' })
  hidden: number;
}

export class CredentialUseRecordDto {
  @ApiProperty({ description: 'The user the use acted as' })
  userId: string;

  @ApiProperty(timestamp())
  at: string;

  @ApiProperty({ description: 'Where the request went (host or host:port): refused, the host the use proposed' })
  host: string;

  @ApiProperty({
    enum: CREDENTIAL_USE_KINDS,
    description: 'A production run, a test run or node test, or a dropdown filled while building',
  })
  kind: CredentialUseKind;

  @ApiProperty({ type: 'string', nullable: true, description: 'The run, for run and test uses' })
  runId: string | null;

  @ApiProperty({ description: 'Sent; false: refused before sending, its host not allowed' })
  allowed: boolean;
}

export const CredentialUsePageDto = pageOf(CredentialUseRecordDto, 'CredentialUsePageDto');

export const credentialUseView = (use: CredentialUse) => ({
  userId: use.userId,
  at: use.at.toISOString(),
  host: use.host,
  kind: use.kind,
  runId: use.runId,
  allowed: use.allowed,
});
