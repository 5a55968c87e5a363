// Request and response framing: the int32 size prefix, request headers v0-v2 and response
// headers v0-v1. Which header version an API version uses follows from whether that API
// version is flexible; ApiVersions responses always use header v0 (a client that does not
// know the broker's versions yet must be able to read the answer).
import { apiSpec, API_KEYS, type ApiSpec } from './messages.ts';
import { Reader, Writer } from './primitives.ts';
import { decodeMessage, encodeMessage, type Struct } from './schema.ts';

import { isSplicedFrame, type SplicedFrame } from './spliced-frame.ts';
export interface RequestHeader {
  apiKey: number;
  apiVersion: number;
  correlationId: number;
  clientId: string | null;
  /** Header version that was read (1 or 2; 0 only for requests without a client id). */
  headerVersion: number;
}

export function isFlexible(spec: ApiSpec, version: number): boolean {
  return version >= spec.request.flexibleSince;
}

export function requestHeaderVersion(spec: ApiSpec, version: number): number {
  return isFlexible(spec, version) ? 2 : 1;
}

export function responseHeaderVersion(spec: ApiSpec, version: number): number {
  if (spec.key === API_KEYS.ApiVersions) return 0;
  return isFlexible(spec, version) ? 1 : 0;
}

/** Reads the fixed part (api key, version, correlation id); the rest depends on the API. */
export function readRequestPrefix(frame: Buffer): { apiKey: number; apiVersion: number; correlationId: number } {
  const r = new Reader(frame, 'request header');
  return { apiKey: r.int16(), apiVersion: r.int16(), correlationId: r.int32() };
}

/** Header of a supported API version; leaves the reader at the body. */
export function readRequestHeader(r: Reader, spec: ApiSpec): RequestHeader {
  const apiKey = r.field('RequestApiKey', () => r.int16());
  const apiVersion = r.field('RequestApiVersion', () => r.int16());
  const correlationId = r.field('CorrelationId', () => r.int32());
  // ClientId is a classic (non-compact) nullable string even in header v2.
  const clientId = r.field('ClientId', () => r.string(false, true));
  const headerVersion = requestHeaderVersion(spec, apiVersion);
  if (headerVersion >= 2) r.field('header tagged fields', () => r.taggedFields());
  return { apiKey, apiVersion, correlationId, clientId, headerVersion };
}

/** `lookup`: the APIs accepted (default: what durolab's listener serves). */
export function decodeRequest(frame: Buffer, lookup: (key: number) => ApiSpec | undefined = apiSpec): { header: RequestHeader; spec: ApiSpec; body: Struct } {
  const prefix = readRequestPrefix(frame);
  const spec = lookup(prefix.apiKey);
  if (!spec) throw new Error(`unknown API key ${prefix.apiKey}`);
  const r = new Reader(frame, `${spec.name} v${prefix.apiVersion} request`);
  const header = readRequestHeader(r, spec);
  const body = decodeMessage(spec.request, header.apiVersion, r);
  if (r.remaining !== 0) r.fail(`${r.remaining} bytes left after the request body`);
  return { header, spec, body };
}

/** A whole request frame (size prefix included): what a client sends. */
export function encodeRequest(spec: ApiSpec, version: number, correlationId: number, clientId: string | null, body: Struct): Buffer {
  const w = new Writer(256);
  w.int32(0).int16(spec.key).int16(version).int32(correlationId).string(clientId, false);
  if (requestHeaderVersion(spec, version) >= 2) w.taggedFields();
  encodeMessage(spec.request, version, body, w);
  const out = w.finish();
  out.writeInt32BE(out.length - 4, 0);
  return out;
}

/** A whole response frame (size prefix included); records as FileRegions make it a SplicedFrame. */
export function encodeResponseFrame(spec: ApiSpec, version: number, correlationId: number, body: Struct): Buffer | SplicedFrame {
  const w = new Writer(256);
  w.int32(0).int32(correlationId);
  if (responseHeaderVersion(spec, version) >= 1) w.taggedFields();
  encodeMessage(spec.response, version, body, w);
  const head = w.finish();
  const holeBytes = w.holes.reduce((a, h) => a + h.records.sizeInBytes, 0);
  head.writeInt32BE(head.length - 4 + holeBytes, 0);
  return w.holes.length === 0 ? head : { head, holes: w.holes, wireBytes: head.length + holeBytes };
}

/** A whole response frame (size prefix included), its records in memory. */
export function encodeResponse(spec: ApiSpec, version: number, correlationId: number, body: Struct): Buffer {
  const f = encodeResponseFrame(spec, version, correlationId, body);
  if (isSplicedFrame(f)) throw new Error(`${spec.name} v${version} response: records held as file regions need encodeResponseFrame`);
  return f;
}

/** Response frame without its size prefix, as a client reads it. */
export function decodeResponse(spec: ApiSpec, version: number, frame: Buffer): { correlationId: number; body: Struct } {
  const r = new Reader(frame, `${spec.name} v${version} response`);
  const correlationId = r.field('CorrelationId', () => r.int32());
  if (responseHeaderVersion(spec, version) >= 1) r.field('header tagged fields', () => r.taggedFields());
  const body = decodeMessage(spec.response, version, r);
  if (r.remaining !== 0) r.fail(`${r.remaining} bytes left after the response body`);
  return { correlationId, body };
}
