// Arrival times of the calls a paced number made at the network, as the bench's sandbox records them.

/** The most arrivals in any 1 s window starting at an arrival (`times` ascending, ms). */
export function maxWindow(times: number[]): number {
  let max = 0;
  for (let i = 0, j = 0; i < times.length; i++) {
    while (j < times.length && times[j]! < times[i]! + 1000) j++;
    max = Math.max(max, j - i);
  }
  return max;
}
