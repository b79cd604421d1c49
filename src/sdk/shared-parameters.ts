import type * as ClassTransformer from 'class-transformer';
import type * as ClassValidator from 'class-validator';
import { collectionOptions, CREDENTIAL_ID, credentialIdMessage, numeric, Parameter, ParameterDoc } from './parameter';

// Parameters several nodes take, each declared once: its documentation for the builder and the
// node reference, and its validation. A node puts one on a field of its parameter class, where it
// wants it in its form, with its own description of what the value is for.

/**
 * The decorator packages, loaded when a shared parameter is first declared rather than with the
 * SDK (as ajv is): a plugin carrying its own copy of the SDK loads without them beside it, and the
 * loader hands the service's copies to a plugin that declares one.
 */
const validators = (): typeof ClassValidator => require('class-validator');
const transformers = (): typeof ClassTransformer => require('class-transformer');

/** Applies `decorators` as if written above the field in this order (TypeScript applies the lowest first). */
function all(...decorators: PropertyDecorator[]): PropertyDecorator {
  return (prototype, property) => {
    for (const decorator of [...decorators].reverse()) decorator(prototype, property);
  };
}

/** What an http(s) URL parameter accepts: a host without a top-level domain too (a service on the network). */
const HTTP_URL = { require_tld: false, protocols: ['http', 'https'], require_protocol: true };

/**
 * The collection a node works on: a dropdown of the collections the user building the workflow can
 * see with at least `minRole` (default viewer: the node reads it; editor: it adds files), and a
 * non-empty id (`col_...`). A fixed id is checked when the workflow is saved (its saver must hold
 * `minRole` on it), and the run still checks the rights of whoever it acts as. `optional`: the node
 * may go without one.
 *
 *     @CollectionParameter({ description: 'Id of the collection to list (`col_...`). ...' })
 *     collectionId: string;
 */
export function CollectionParameter(options: {
  description: string;
  minRole?: 'viewer' | 'editor';
  optional?: boolean;
}): PropertyDecorator {
  const v = validators();
  const minRole = options.minRole ?? 'viewer';
  return all(
    Parameter({
      displayName: 'Collection',
      description: options.description,
      schema: { examples: ['col_0123456789abcdef'] },
      loadOptions: minRole === 'viewer' ? collectionOptions : (ctx) => collectionOptions(ctx, { minRole }),
      collection: minRole,
    }),
    ...(options.optional ? [v.IsOptional()] : []),
    v.IsString(),
    v.IsNotEmpty(),
  );
}

/**
 * An http(s) URL of a server the node calls (reached through the outbound guard); `optional`: the
 * node may go without one. A value that is no http(s) URL is refused as "<field> must be an http(s) URL".
 */
export function HttpUrlParameter(doc: ParameterDoc, options: { optional?: boolean } = {}): PropertyDecorator {
  const v = validators();
  return all(
    Parameter(doc),
    ...(options.optional ? [v.IsOptional()] : []),
    v.IsUrl(HTTP_URL, { message: ({ property }) => `${property} must be an http(s) URL` }),
  );
}

/**
 * The credential (`crd_...`) that authenticates the node to a server, of one of `types`: injected
 * at send time, never visible to the run. Left out, none is sent; when given it must be an id.
 */
export function CredentialParameter(options: { description: string; types: readonly string[] | true }): PropertyDecorator {
  const v = validators();
  return all(
    Parameter({ displayName: 'Credential', description: options.description, credential: options.types }),
    v.ValidateIf((_params: object, value: unknown) => value !== undefined),
    v.IsString(),
    v.Matches(CREDENTIAL_ID, { message: credentialIdMessage }),
  );
}

/** The credential types an OpenAI-compatible endpoint takes: a token, never a user name and password. */
export const ENDPOINT_CREDENTIAL_TYPES: readonly string[] = ['bearer', 'header', 'query', 'oauth2-client-credentials'];

/**
 * Another OpenAI-compatible server than the service's (LLM_URL), for nodes that talk to a model:
 * its base URL, optional. Pair it with `@EndpointCredentialParameter()` on a `credential` field.
 */
export function EndpointParameter(options: { description: string; examples: readonly string[] }): PropertyDecorator {
  return HttpUrlParameter(
    { displayName: 'Endpoint', description: options.description, schema: { examples: [...options.examples] } },
    { optional: true },
  );
}

/** The credential of an `endpoint` (see EndpointParameter). */
export function EndpointCredentialParameter(): PropertyDecorator {
  return CredentialParameter({
    description:
      'The credential (`crd_...`) that authenticates to `endpoint`, usually a bearer token: injected at send time, never visible to the run.',
    types: ENDPOINT_CREDENTIAL_TYPES,
  });
}

/** A model's sampling temperature, 0 (most deterministic) to 2; optional, a number written as text too. */
export function TemperatureParameter(): PropertyDecorator {
  const v = validators();
  return all(
    Parameter({ displayName: 'Temperature', description: 'Sampling temperature, 0 (most deterministic) to 2.' }),
    v.IsOptional(),
    transformers().Transform(numeric),
    v.IsNumber(),
    v.Min(0),
    v.Max(2),
  );
}
