/**
 * A real `redis-server` (Debian package `redis-server`) on a free loopback port, for the hint
 * channel's tests and the fleet benchmark: started, killed (SIGKILL) and restarted on the same port.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer, connect, type AddressInfo } from 'node:net';

/** Where `redis-server` is, or `undefined` when it is not installed. */
export const redisServerPath: string | undefined = (() => {
  const found = spawnSync('sh', ['-c', 'command -v redis-server'], { encoding: 'utf8' });
  const path = found.stdout.trim();
  return found.status === 0 && path.length > 0 ? path : undefined;
})();

export interface RedisServer {
  readonly port: number;
  readonly url: string;
  /** SIGKILL: connections drop without a goodbye, as in a crash. */
  kill(): Promise<void>;
  /** Starts it again on the same port and waits until it answers. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => { resolve(); }));
  return port;
}

function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const done = (ok: boolean): void => { socket.destroy(); resolve(ok); };
    socket.setTimeout(500, () => { done(false); });
    socket.on('error', () => { done(false); });
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (data) => { done(data.toString().startsWith('+PONG')); });
  });
}

export async function startRedis(): Promise<RedisServer> {
  if (redisServerPath === undefined) throw new Error('redis-server is not installed');
  const path = redisServerPath;
  const port = await freePort();
  let child: ChildProcess | undefined;
  const launch = async (): Promise<void> => {
    child = spawn(path, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    const deadline = Date.now() + 10_000;
    while (!(await ping(port))) {
      if (Date.now() > deadline) throw new Error(`redis-server did not start on port ${port}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  const kill = async (): Promise<void> => {
    const c = child;
    child = undefined;
    if (!c || c.exitCode !== null) return;
    const exited = new Promise((resolve) => c.once('exit', resolve));
    c.kill('SIGKILL');
    await exited;
  };
  await launch();
  return { port, url: `redis://127.0.0.1:${port}`, kill, restart: launch, stop: kill };
}
