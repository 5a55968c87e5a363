// metadata.version feature levels and the Apache Kafka release each belongs to, as Kafka's
// MetadataVersion enum numbers them (server-common; levels 1-6 predate KRaft production and
// are listed for completeness). A cluster's finalized level is what its operator upgraded the
// metadata to: a lower bound of the brokers' release, not the release itself.

const LEVELS: ReadonlyArray<readonly [number, string]> = [
  [1, '3.0-IV1'],
  [2, '3.1-IV0'],
  [3, '3.2-IV0'],
  [4, '3.3-IV0'],
  [5, '3.3-IV1'],
  [6, '3.3-IV2'],
  [7, '3.3-IV3'],
  [8, '3.4-IV0'],
  [9, '3.5-IV0'],
  [10, '3.5-IV1'],
  [11, '3.5-IV2'],
  [12, '3.6-IV0'],
  [13, '3.6-IV1'],
  [14, '3.6-IV2'],
  [15, '3.7-IV0'],
  [16, '3.7-IV1'],
  [17, '3.7-IV2'],
  [18, '3.7-IV3'],
  [19, '3.7-IV4'],
  [20, '3.8-IV0'],
  [21, '3.9-IV0'],
  [22, '4.0-IV0'],
  [23, '4.0-IV1'],
  [24, '4.0-IV2'],
  [25, '4.0-IV3'],
  [26, '4.1-IV0'],
  [27, '4.1-IV1'],
  [28, '4.2-IV0'],
  [29, '4.2-IV1'],
  [30, '4.3-IV0'],
  [31, '4.4-IV0'],
  [32, '4.4-IV1'],
  [33, '4.4-IV2'],
  [34, '4.5-IV0'],
];

/** "4.4-IV2" for 33; a level beyond the table is named as such. */
export function releaseOfMetadataVersion(level: number): string {
  const hit = LEVELS.find(([l]) => l === level);
  if (hit) return hit[1];
  const last = LEVELS[LEVELS.length - 1]!;
  return level > last[0] ? `level ${level} (newer than ${last[1]})` : `level ${level} (unknown)`;
}
