/** `200` → `2xx`. Anything that is not an HTTP status (no answer at all) → `none`. */
export function statusClass(status: number | undefined): string {
  if (status === undefined || !(status >= 100 && status < 600)) return 'none';
  return STATUS_CLASSES[Math.floor(status / 100)];
}

const STATUS_CLASSES = ['none', '1xx', '2xx', '3xx', '4xx', '5xx'];
