/**
 * A size in bytes for people, with its unit: `512 bytes`, `1.5 KiB`, `12.3 MiB`, `2.1 GiB`
 * (binary units; one decimal under 100 of a unit).
 */
export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} byte${bytes === 1 ? '' : 's'}`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value < 100 ? value.toFixed(1).replace(/\.0$/, '') : Math.round(value)} ${units[unit]}`;
}
