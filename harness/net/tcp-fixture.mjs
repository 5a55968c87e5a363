// Test fixture for the lab network tests: a TCP server to run inside a node's namespace, and a
// prober to run in a namespace or the root one. Plain JS, so `node tcp-fixture.mjs` runs it
// anywhere without a loader.
//   serve NAME PORT...            on 0.0.0.0:PORT each; greets "NAME PORT\n"; then a first line
//                                 "SEND n" gets n bytes back and the end; "PUT" gets the bytes
//                                 that follow counted, answered "GOT n\n" at the client's end.
//                                 Prints "LISTENING" once every port listens.
//   probe TIMEOUT_MS HOST:PORT... connects to each at once; prints one JSON array of
//                                 { target, ok, greeting?, error? } (ok: the greeting arrived).
import net from 'node:net';

function serve(name, ports) {
  let listening = 0;
  for (const port of ports) {
    const server = net.createServer((sock) => {
      sock.on('error', () => undefined);
      sock.write(`${name} ${port}\n`);
      let head = '';
      let mode = null;
      let got = 0;
      sock.on('data', (chunk) => {
        if (mode === 'put') return void (got += chunk.length);
        head += chunk.toString('latin1');
        const nl = head.indexOf('\n');
        if (nl < 0) return;
        const [cmd, n] = head.slice(0, nl).split(' ');
        if (cmd === 'SEND') {
          mode = 'send';
          sock.end(Buffer.alloc(Number(n), 0x61));
        } else {
          mode = 'put';
          got += Buffer.byteLength(head, 'latin1') - nl - 1;
        }
      });
      sock.on('end', () => {
        if (mode === 'put') sock.end(`GOT ${got}\n`);
      });
    });
    server.listen(Number(port), '0.0.0.0', () => {
      if (++listening === ports.length) console.log('LISTENING');
    });
  }
}

function probeOne(target, timeoutMs) {
  const host = target.slice(0, target.lastIndexOf(':'));
  const port = target.slice(target.lastIndexOf(':') + 1);
  return new Promise((resolve) => {
    const sock = net.connect(Number(port), host);
    const done = (r) => {
      clearTimeout(timer);
      sock.destroy();
      resolve({ target, ...r });
    };
    const timer = setTimeout(() => done({ ok: false, error: `no greeting within ${timeoutMs} ms` }), timeoutMs);
    let buf = '';
    sock.on('data', (c) => {
      buf += c.toString();
      if (buf.includes('\n')) done({ ok: true, greeting: buf.trim() });
    });
    sock.on('error', (err) => done({ ok: false, error: `${err.code ?? ''} ${err.message}`.trim() }));
  });
}

const [mode, ...args] = process.argv.slice(2);
if (mode === 'serve') serve(args[0], args.slice(1));
else if (mode === 'probe') {
  const [timeoutMs, ...targets] = args;
  console.log(JSON.stringify(await Promise.all(targets.map((t) => probeOne(t, Number(timeoutMs))))));
} else {
  console.error('usage: tcp-fixture.mjs serve NAME PORT... | probe TIMEOUT_MS HOST:PORT...');
  process.exit(2);
}
