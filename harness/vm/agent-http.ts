// The host's HTTP exchange with a guest agent (harness/vm/vm.ts): one JSON request over a
// keep-alive agent, the whole answer body, a timeout that destroys the request.
import http from 'node:http';

export interface HttpAnswer {
  status: number;
  body: Buffer;
}

export function httpRequest(agent: http.Agent, url: string, method: string, body: unknown, timeoutMs: number): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const req = http.request(
      url,
      { method, agent, timeout: timeoutMs, headers: data ? { 'content-type': 'application/json', 'content-length': data.length } : {} },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`timeout after ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(data);
  });
}
