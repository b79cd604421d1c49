import { IsNotEmpty, IsString, MaxLength } from 'class-validator';
import { CollectionParameter, Parameter } from 'workflow-collection-service/sdk';

export class AddFileParameters {
  @CollectionParameter({
    description: 'Id of the collection to add the file to (`col_...`). The user who started the run needs the editor role on it.',
    // Only where the builder may add files; the run still checks the rights of whoever starts it.
    minRole: 'editor',
  })
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
