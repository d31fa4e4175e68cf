import { CuadraError } from '@cuadra/shared';

/**
 * The dated versions of the public contract, oldest first. A version names the tools' schemas and
 * behaviour as they were on that day; a change that could break a caller gets a new date, and a
 * workspace keeps answering as the version it started on until it asks for another
 * (`Cuadra-Version` on a request). 2026-11-01 is the first: every workspace opened before dated
 * versions existed started on it.
 */
export const API_VERSIONS = ['2026-11-01'] as const;
export type ApiVersion = (typeof API_VERSIONS)[number];
/** The newest version: what a workspace opened today is pinned to. */
export const CURRENT_API_VERSION: ApiVersion = API_VERSIONS[API_VERSIONS.length - 1];
/** The header a caller names a version in, and every answer states the version it was answered as. */
export const VERSION_HEADER = 'Cuadra-Version';

/**
 * The version a request asks for, or undefined when it names none. A value that is not one of
 * {@link API_VERSIONS} is refused (422 `invalid_input`, `field` "", with the versions there
 * are): answering as some other version than the one asked for would be worse than no answer.
 */
export function requestedVersion(header: string | undefined): ApiVersion | undefined {
  if (header === undefined) return undefined;
  const value = header.trim();
  if ((API_VERSIONS as readonly string[]).includes(value)) return value as ApiVersion;
  throw new CuadraError('invalid_input', `Cuadra-Version must be one of ${API_VERSIONS.join(', ')} (a date, YYYY-MM-DD); omit it to be answered as the version your workspace is pinned to.`, { field: '', extra: { supported_versions: [...API_VERSIONS] } });
}

/** A stored pin read back: a known version, else the first (the workspace predates dated versions). */
export function pinnedOrFirst(stored: unknown): ApiVersion {
  return (API_VERSIONS as readonly unknown[]).includes(stored) ? (stored as ApiVersion) : API_VERSIONS[0];
}
