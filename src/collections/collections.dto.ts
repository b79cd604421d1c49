import { Transform } from 'class-transformer';
import { IsString, Length } from 'class-validator';
import { Field, NoControlCharacters, trimmed } from '../common/input-validation';
import type { Collection } from '../domain/collection.model';
import type { Role } from '../domain/membership.model';

export const MAX_COLLECTION_NAME_CHARS = 200;

/** Validated by the REST API and by the MCP tool service_create_collection alike: keep it free of Nest. */
export class CreateCollectionDto {
  @Field({ description: `Collection name, 1 to ${MAX_COLLECTION_NAME_CHARS} characters after trimming` })
  @Transform(trimmed)
  @IsString()
  @Length(1, MAX_COLLECTION_NAME_CHARS)
  @NoControlCharacters()
  name: string;
}

export const collectionView = (collection: Collection, role: Role) => ({
  id: collection.id,
  name: collection.name,
  createdAt: collection.createdAt.toISOString(),
  updatedAt: collection.updatedAt.toISOString(),
  role,
});

export type CollectionView = ReturnType<typeof collectionView>;
