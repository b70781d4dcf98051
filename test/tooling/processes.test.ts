/**
 * Free ports for the launchers and tests come from below the kernel's ephemeral range, where no
 * outgoing connection's local end can take them between choosing and binding.
 */
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { getFreePort } from '../../src/tooling/processes';

test('a free port is bindable and below the ephemeral range', async () => {
  const rangeStart = Number(
    readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0],
  );
  const ports = await Promise.all(Array.from({ length: 20 }, () => getFreePort()));
  for (const port of ports) {
    expect(port).toBeGreaterThanOrEqual(20_000);
    expect(port).toBeLessThan(rangeStart);
  }
  const first = ports[0] ?? 0;
  const srv = net.createServer();
  await new Promise<void>((resolve, reject) => {
    srv.once('error', reject);
    srv.listen({ port: first, host: '127.0.0.1', exclusive: true }, resolve);
  });
  await new Promise((r) => srv.close(r));
});
