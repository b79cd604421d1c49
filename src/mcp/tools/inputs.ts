import { IsString, Length } from 'class-validator';
import { Field } from '../../common/input-validation';

/**
 * The ids a tool takes by the names INTERFACE.md 4.2 fixes. The REST API carries them in its paths;
 * everything else a tool takes is a shared input DTO (see tool-arguments.ts).
 */

export const MAX_ID_CHARS = 200;

export class CollectionRef {
  @Field({ description: 'Id of the collection (starts with col_), from service_list_collections or service_create_collection' })
  @IsString()
  @Length(1, MAX_ID_CHARS)
  collection_id: string;
}

export class FileRef extends CollectionRef {
  @Field({ description: 'Id of the file (starts with fle_), from service_list_collection_files' })
  @IsString()
  @Length(1, MAX_ID_CHARS)
  file_id: string;
}

/** What a model is told about `offset`, the paging argument of the listing and the search. */
export const offsetDescription = (what: string) =>
  `Number of ${what} to skip, from 0 (the default); use the nextOffset of the previous call to page on`;
