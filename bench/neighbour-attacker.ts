/**
 * The attacking tenant of `bench:neighbours` as a process of its own, run at a low CPU priority (it stands
 * for clients on other machines: what it spends generating the attack must not count as the gateway's).
 * Forked with an IPC channel: it answers `{ type: 'ready' }`, then runs the attack named by `{ type:
 * 'start', name, url, token }` (bench/neighbour-attacks.ts) until `{ type: 'stop' }`, answering
 * `{ type: 'started' }` and `{ type: 'stopped' }`.
 */
import { Agent } from 'undici';
import { attacks } from './neighbour-attacks';
import { McpHttpClient } from './support';

interface StartMessage {
  type: 'start';
  name: string;
  url: string;
  token: string;
}

async function main(): Promise<void> {
  const send = process.send?.bind(process);
  if (!send) throw new Error('bench/neighbour-attacker.ts runs forked, with an IPC channel');
  const dispatcher = new Agent({ connections: 2000, bodyTimeout: 0, headersTimeout: 0 });
  let stop: (() => Promise<void>) | undefined;
  process.on('message', (m: StartMessage | { type: 'stop' }) => {
    void (async () => {
      if (m.type === 'start') {
        const attack = attacks().find((a) => a.name === m.name);
        if (!attack) throw new Error(`no attack ${m.name}`);
        const client = new McpHttpClient(m.url, dispatcher, { token: m.token, tasks: false });
        const tasksClient = new McpHttpClient(m.url, dispatcher, { token: m.token });
        stop = await attack.start({ url: m.url, token: m.token, client, tasksClient, dispatcher });
        send({ type: 'started' });
      } else if (m.type === 'stop') {
        await stop?.();
        stop = undefined;
        send({ type: 'stopped' });
      }
    })();
  });
  process.once('disconnect', () => process.exit(0));
  process.once('SIGTERM', () => process.exit(0));
  send({ type: 'ready', url: 'ipc', pid: process.pid });
}

void main();
