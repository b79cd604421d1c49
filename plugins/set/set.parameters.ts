import { IsArray, IsBoolean, IsObject, IsString } from 'class-validator';
import { Parameter } from 'workflow-collection-service/sdk';

export class SetParameters {
  @Parameter({
    displayName: 'Fields',
    description:
      'Fields to add or replace: names (a dotted name reaches into nested objects) and their values. As an expression the whole object is computed for each item, e.g. `({ total: item.price * item.quantity, "customer.name": item.first + " " + item.last })`.',
    schema: { examples: [{ status: 'done', 'meta.source': 'import' }] },
  })
  @IsObject()
  fields: Record<string, unknown> = {};

  @Parameter({
    displayName: 'Rename',
    description: 'Fields to rename: old name to new name (dotted names allowed), e.g. {"fullName": "name"}.',
  })
  @IsObject()
  rename: Record<string, string> = {};

  @Parameter({ displayName: 'Remove', description: 'Fields to remove (dotted names allowed), after renaming.' })
  @IsArray()
  @IsString({ each: true })
  remove: string[] = [];

  @Parameter({
    displayName: 'Keep only set fields',
    description: 'Output only the fields of `fields` (and the renamed ones) instead of the whole item with them.',
  })
  @IsBoolean()
  keepOnly: boolean = false;
}
