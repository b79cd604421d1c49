import { Transform } from 'class-transformer';
import { IsArray, IsBoolean, IsOptional } from 'class-validator';
import { CollectionParameter, Parameter } from 'workflow-collection-service/sdk';

export class GetFileContentsParameters {
  @CollectionParameter({
    description:
      "Id of the collection the files belong to (`col_...`). Leave it out to read each file from the collection its file object names (List Files' output does). The run's user needs at least the viewer role on it.",
    optional: true,
  })
  collectionId?: string;

  @Parameter({
    displayName: 'Files',
    description:
      "Files to read: ids, file objects (List Files' output), or arrays of them, nested as they come. Leave it out to read the node's input. As an expression, e.g. `nodes.list` or `input.fileIds`.",
    schema: { examples: [['fle_0123456789abcdef']] },
  })
  // One id is as good as a list of one.
  @Transform(({ value }) => (typeof value === 'string' ? [value] : value))
  @IsOptional()
  @IsArray()
  files?: unknown[];

  @Parameter({
    displayName: 'Skip files without text',
    description:
      'Leave out files that have no extracted text (still being ingested, or their ingestion failed) instead of failing. `skipUnavailable` also covers files that are gone.',
  })
  @IsBoolean()
  skipFilesWithoutText: boolean = false;

  @Parameter({
    displayName: 'Skip unavailable files',
    description:
      'Leave out any file that cannot be read (no extracted text yet or ever, deleted meanwhile) instead of failing the node, so one bad file does not stop a reading loop. Each file left out is logged with its reason.',
  })
  @IsBoolean()
  skipUnavailable: boolean = false;
}
