import { z } from 'zod';

/** Argument schemas shared by several tools; the names are the ones INTERFACE.md 4.2 fixes. */

export const collectionIdArg = z
  .string()
  .min(1)
  .max(200)
  .describe('Id of the collection (starts with col_), from service_list_collections or service_create_collection');

/**
 * `number` as the interface writes it; whole numbers are enforced on parse, not in the schema
 * type. Left out, it is 0: the first page, which is what a model asking for "the files" means.
 */
export const offsetArg = (what: string) =>
  z
    .number()
    .min(0)
    .refine(Number.isInteger, { message: 'must be a whole number' })
    .default(0)
    .describe(`Number of ${what} to skip, from 0 (the default); use the nextOffset of the previous call to page on`);
