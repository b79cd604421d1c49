import { IsNotEmpty, IsString, MaxLength } from 'class-validator';
import { collectionOptions, Parameter } from '../../src/sdk';

export class AddFileParameters {
  @Parameter({
    displayName: 'Collection',
    description: 'Id of the collection to add the file to (`col_...`). The user who started the run needs the editor role on it.',
    schema: { examples: ['col_0123456789abcdef'] },
    // Only where the builder may add files; the run still checks the rights of whoever starts it.
    loadOptions: (ctx) => collectionOptions(ctx, { minRole: 'editor' }),
    collection: 'editor',
  })
  @IsString()
  @IsNotEmpty()
  collectionId: string;

  @Parameter({
    displayName: 'Name',
    description: 'File name shown in listings and search results; as an expression, e.g. `item.title + ".pdf"`.',
  })
  @IsString()
  @IsNotEmpty()
  @MaxLength(255)
  name: string;

  @Parameter({
    displayName: 'URL',
    description: 'Where the service downloads the file from (http or https), or a data: URL carrying its bytes.',
    schema: { examples: ['https://example.com/report.pdf'] },
  })
  @IsString()
  @IsNotEmpty()
  url: string;
}
