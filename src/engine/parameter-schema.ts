import { classSchema, JsonSchema, PropertyDoc, PropertyType } from '../common/class-schema';
import { LoadOptions, parameterDocs, ParametersClass } from '../sdk';

export type { JsonSchema };

/** JSON type names a parameter can have; `unknown` when no decorator fixes one. */
export type ParameterType = PropertyType;

export interface ParametersSchema {
  schema: JsonSchema;
  /** Declared type of each property, used to coerce expression results before validation. */
  types: Record<string, ParameterType>;
  /** Properties documented as `template: true`. */
  templates: Set<string>;
  /** Properties documented as `code: true` (JavaScript run by the node in the sandbox). */
  codes: Set<string>;
  /** `loadOptions` of the properties that have dynamic options. */
  optionLoaders: Map<string, LoadOptions>;
  /** Properties documented as credentials, with the types they accept (null: any). */
  credentials: Map<string, readonly string[] | null>;
  /** Properties that name collections (`@Parameter({ collection })`), with the role each needs. */
  collections: Map<string, 'viewer' | 'editor'>;
}

/**
 * Builds the JSON Schema of a parameter class from its class-validator metadata and `@Parameter()`
 * docs, so the one class serves validation, documentation and the builder.
 */
export function parametersSchema(parameters: ParametersClass<object>): ParametersSchema {
  const docs = new Map<string, PropertyDoc>();
  const templates = new Set<string>();
  const codes = new Set<string>();
  const optionLoaders = new Map<string, LoadOptions>();
  const credentials = new Map<string, readonly string[] | null>();
  const collections = new Map<string, 'viewer' | 'editor'>();
  for (const [name, doc] of parameterDocs(parameters)) {
    if (doc.collection) collections.set(name, doc.collection);
    if (doc.credential) credentials.set(name, doc.credential === true ? null : [...doc.credential]);
    if (doc.credentialItems) credentials.set(name, doc.credentialItems === true ? null : [...doc.credentialItems]);
    if (doc.template) templates.add(name);
    if (doc.code) codes.add(name);
    if (doc.loadOptions) optionLoaders.set(name, doc.loadOptions);
    docs.set(name, {
      title: doc.displayName,
      description: doc.description,
      schema: {
        // Tells a builder that `${...}` in this text is rendered in every mode.
        ...(doc.template ? { 'x-template': true } : {}),
        // Tells a builder to offer a code editor: the text is a JavaScript function body.
        ...(doc.code ? { 'x-code': 'javascript' } : {}),
        ...(doc.schema ?? {}),
        // Tells a builder to offer a dropdown filled from GET .../parameters/<name>/options.
        ...(doc.loadOptions ? { 'x-dynamic-options': true } : {}),
        // Tells a builder to offer the user's credentials (GET /api/v1/credentials) of these types.
        ...(doc.credential
          ? { format: 'credential', ...(doc.credential === true ? {} : { 'x-credential-types': [...doc.credential] }) }
          : {}),
        // Tells a builder that each entry's `credential` is one of the user's credentials of these types.
        ...(doc.credentialItems ? { 'x-credential-items': doc.credentialItems === true ? true : [...doc.credentialItems] } : {}),
      },
    });
  }
  const { schema, types } = classSchema(parameters, docs);
  return { schema, types, templates, codes, optionLoaders, credentials, collections };
}
