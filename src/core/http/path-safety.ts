const ENCODED_SEPARATOR = /%(2f|5c|00)/i;
const DOT_SEGMENT = /(^|\/)(\.|%2e){2}(\/|$)/i;

/** Path tricks are refused before routing: encoded slashes or backslashes, NULs, `..` segments. */
export function pathIsSafe(url: string): boolean {
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  if (path.indexOf('%') !== -1 && ENCODED_SEPARATOR.test(path)) return false;
  if (path.indexOf('.') !== -1 || path.indexOf('%') !== -1) return !DOT_SEGMENT.test(path);
  return true;
}

/** The refusal of an unsafe path, the same wherever the path arrives (a request, a batch item, a view part). */
export const UNSAFE_PATH_MESSAGE = 'The path contains an encoded separator or a dot segment.';
