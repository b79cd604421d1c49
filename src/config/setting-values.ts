// How a setting's text becomes its value (lists, integers, booleans, empty as unset) and the check
// that refuses weak secrets: the helpers the settings of app-settings.ts are declared with.
import { ValidateBy, ValidationArguments } from 'class-validator';

export const list = ({ value }: { value: unknown }) =>
  typeof value === 'string'
    ? value
        .split(',')
        .map((v) => v.trim())
        .filter(Boolean)
    : value;
export const int = ({ value }: { value: unknown }) => (typeof value === 'string' && /^-?\d+$/.test(value.trim()) ? Number(value) : value);
export const bool = ({ value }: { value: unknown }) =>
  value === 'true' || value === '1' ? true : value === 'false' || value === '0' ? false : value;
export const emptyToUndefined = ({ value }: { value: unknown }) => (value === '' ? undefined : value);

/** The value docker-compose.yml once defaulted BOOTSTRAP_API_KEY to, and variants of it. */
const PLACEHOLDER = /change[-_ ]?me|replace[-_ ]?me|your[-_ ]?(api[-_ ]?)?(key|secret)|placeholder|example/i;
const MIN_DISTINCT_CHARACTERS = 8;
const RANDOM_SECRET_HINT = 'set a long random secret, e.g. the output of `openssl rand -hex 32`';

/** Why a secret is too easy to guess, or undefined when it is not obviously weak. */
export function weakSecretReason(value: string): string | undefined {
  if (PLACEHOLDER.test(value)) return `is a placeholder, not a secret: ${RANDOM_SECRET_HINT}`;
  if (new Set(value).size < MIN_DISTINCT_CHARACTERS) {
    return `has fewer than ${MIN_DISTINCT_CHARACTERS} different characters, too easy to guess: ${RANDOM_SECRET_HINT}`;
  }
  return undefined;
}

/** Refuses placeholder and obviously weak secrets (the key of the first admin, say). */
export const NotWeakSecret = () =>
  ValidateBy({
    name: 'notWeakSecret',
    validator: {
      validate: (value: unknown) => typeof value !== 'string' || weakSecretReason(value) === undefined,
      defaultMessage: (args?: ValidationArguments) => weakSecretReason(String(args?.value)) ?? 'is too weak',
    },
  });
