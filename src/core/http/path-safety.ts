const ENCODED_SEPARATOR = /%(2f|5c)/i;
const ENCODED_NUL = /%00/;
const DOT_SEGMENT = /(^|\/)(\.|%2e){2}(\/|$)/i;

export const NUL_PATH_MESSAGE = 'The path contains an encoded NUL character (%00).';
export const SEPARATOR_PATH_MESSAGE = 'The path contains an encoded separator (%2F or %5C).';
export const DOT_PATH_MESSAGE = 'The path contains a dot segment (.. or %2e%2e).';

/**
 * Path tricks are refused before routing: an encoded NUL, encoded slashes or backslashes, `..` segments.
 * Returns what is wrong with the path (the message of its 400), or undefined for a safe one.
 */
export function unsafePathReason(url: string): string | undefined {
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  if (path.indexOf('%') !== -1) {
    if (ENCODED_NUL.test(path)) return NUL_PATH_MESSAGE;
    if (ENCODED_SEPARATOR.test(path)) return SEPARATOR_PATH_MESSAGE;
  }
  if ((path.indexOf('.') !== -1 || path.indexOf('%') !== -1) && DOT_SEGMENT.test(path))
    return DOT_PATH_MESSAGE;
  return undefined;
}

export function pathIsSafe(url: string): boolean {
  return unsafePathReason(url) === undefined;
}
