import { Transform } from 'class-transformer';
import { IsArray, IsIn, IsString, Matches, MaxLength } from 'class-validator';
import { CollectionParameter, Parameter } from 'workflow-collection-service/sdk';

export const FILE_STATUSES = ['pending', 'processing', 'indexed', 'error'];

export class ListFilesParameters {
  @CollectionParameter({
    description: 'Id of the collection to list (`col_...`). The user who started the run needs at least the viewer role on it.',
  })
  collectionId: string;

  @Parameter({
    displayName: 'Offset',
    description:
      'How many files to skip: the page index times the page size (20). As an expression, e.g. `${item.page * 20}` or `input.page * 20`.',
    schema: { examples: ['0', '20', '${item.page * 20}'] },
  })
  // A number written as a fixed value is as good as its text.
  @Transform(({ value }) => (typeof value === 'number' ? String(value) : value))
  @IsString()
  @Matches(/^\d{1,9}$/, { message: 'offset must be a whole number of files to skip, such as "0" or "40"' })
  offset: string = '0';

  @Parameter({
    displayName: 'Status',
    description:
      'Only files in these statuses (pending, processing, indexed, error); empty, the default, lists every file. `["indexed"]` lists what can be read and searched.',
    schema: { examples: [['indexed'], ['pending', 'processing']] },
  })
  // One status is as good as a list of one.
  @Transform(({ value }) => (typeof value === 'string' ? [value] : value))
  @IsArray()
  @IsIn(FILE_STATUSES, { each: true, message: `status must be among ${FILE_STATUSES.join(', ')}` })
  status: string[] = [];

  @Parameter({
    displayName: 'Instructions',
    description:
      'Natural-language guidance for AI Decide on this node (e.g. which page to read), rendered as a template: `${...}` insertions are evaluated in every mode.',
    template: true,
  })
  @IsString()
  @MaxLength(10_000)
  instructions: string = '';
}
