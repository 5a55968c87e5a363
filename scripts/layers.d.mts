export interface Floor {
  floor: number;
  rooms: string[];
  line: number;
}
export interface ImportEdge {
  from: string;
  to: string;
  line: number;
}
export interface UphillImport extends ImportEdge {
  fromRoom: string;
  toRoom: string;
  fromFloor: number | undefined;
  toFloor: number | undefined;
}
export function roomOf(rel: string): string | undefined;
export function readFloors(root?: string): Floor[];
export function floorOf(floors: Floor[], room: string): number | undefined;
export function importEdges(root?: string): ImportEdge[];
export function uphillImports(edges: ImportEdge[], floors: Floor[]): UphillImport[];
export function roomCircles(edges: ImportEdge[]): string[][];
export function unplacedRooms(floors: Floor[], root?: string): string[];
