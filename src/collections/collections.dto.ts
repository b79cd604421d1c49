import { ApiProperty } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsString, Length } from 'class-validator';
import { Collection } from '../storage/ports/collection-store.port';
import { Role } from '../storage/ports/membership-store.port';

export class CreateCollectionDto {
  @ApiProperty({ description: 'Collection name, 1 to 200 characters after trimming', minLength: 1, maxLength: 200 })
  @Transform(({ value }) => (typeof value === 'string' ? value.trim() : value))
  @IsString()
  @Length(1, 200)
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
