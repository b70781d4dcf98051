/**
 * `@modelcontextprotocol/server-everything` in stdio mode behind the gateway (issue 26): the rest of the
 * gateway on top of a local process. Its prompts and resources (lists, templates, reads) through the
 * gateway; a slow ordinary tool with progress run as a hosted task (the upstream's hosting policy) whose
 * progress becomes the task's status message and whose answer completes it; and its list changes (a
 * resource it registers during a call) reaching a client's `subscriptions/listen` stream, after which a
 * re-list shows the new resource. Real processes, real Temporal, both databases.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { TestGateway } from '../helpers/gateway';
import { startTestGateway } from '../helpers/gateway';
import { isAck, listen } from '../helpers/listen';
import type { McpTestClient } from '../helpers/mcp-client';
import { resultText } from '../helpers/mcp-client';

const EVERYTHING = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
const SLOW = 'trigger-long-running-operation';

let gw: TestGateway;
let client: McpTestClient;

beforeAll(async () => {
  gw = await startTestGateway({
    config: {
      stdio: { catalog: { everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] } } },
    },
    projects: () => [
      {
        slug: 'local',
        namespacing: false,
        upstreams: [
          {
            alias: 'everything',
            url: 'stdio:everything',
            hosting: { tools: [SLOW], promoteAfterMs: 1000, repeatable: [`!${SLOW}`] },
          },
        ],
      },
    ],
  });
  client = gw.clientFor('local');
}, 180_000);
afterAll(async () => {
  await gw?.close();
});

async function resourceUris(): Promise<string[]> {
  const listed = await client.request('resources/list', {}, { tasks: false });
  expect(listed.body.error).toBeUndefined();
  return ((listed.body.result?.resources ?? []) as Array<{ uri: string }>).map((r) => r.uri);
}

test('its prompts are listed and got, with their arguments', async () => {
  const listed = await client.request('prompts/list', {}, { tasks: false });
  const names = ((listed.body.result?.prompts ?? []) as Array<{ name: string }>).map((p) => p.name);
  expect(names).toEqual(expect.arrayContaining(['simple-prompt', 'args-prompt']));

  const simple = await client.request('prompts/get', { name: 'simple-prompt' }, { tasks: false });
  expect(JSON.stringify(simple.body.result?.messages)).toContain(
    'This is a simple prompt without arguments.',
  );
  const args = await client.request(
    'prompts/get',
    { name: 'args-prompt', arguments: { city: 'Lyon', state: 'Rhône' } },
    { tasks: false },
  );
  expect(JSON.stringify(args.body.result?.messages)).toContain("What's weather in Lyon, Rhône?");
});

test('its resources and resource templates are listed and read', async () => {
  const uris = await resourceUris();
  const doc = uris.find((u) => u.startsWith('demo://resource/static/document/'));
  expect(doc).toBeDefined();
  const read = await client.request('resources/read', { uri: doc }, { tasks: false });
  const contents = (read.body.result?.contents ?? []) as Array<{ uri: string; text?: string }>;
  expect(contents[0]?.uri).toBe(doc);
  expect(contents[0]?.text?.length).toBeGreaterThan(0);

  const templates = await client.request('resources/templates/list', {}, { tasks: false });
  const patterns = ((templates.body.result?.resourceTemplates ?? []) as Array<{ uriTemplate: string }>).map(
    (t) => t.uriTemplate,
  );
  expect(patterns).toContain('demo://resource/dynamic/text/{resourceId}');
  const dynamic = await client.request(
    'resources/read',
    { uri: 'demo://resource/dynamic/text/7' },
    { tasks: false },
  );
  expect(JSON.stringify(dynamic.body.result?.contents)).toContain('Resource 7');
});

test('a slow tool with progress runs as a hosted task: progress as its status message, then completed', async () => {
  const created = await client.callTool(SLOW, { duration: 3, steps: 3 });
  expect(created.body.result).toMatchObject({ resultType: 'task', status: 'working' });
  const taskId = String(created.body.result?.taskId);
  const seen = new Set<string>();
  let last: Record<string, unknown> | undefined;
  for (;;) {
    last = (await client.getTask(taskId)).body.result;
    if (typeof last?.statusMessage === 'string') seen.add(last.statusMessage);
    if (last?.status !== 'working') break;
    await sleep(200);
  }
  expect([...seen].some((m) => /\(\d\/3\)/.test(m))).toBe(true);
  expect(last).toMatchObject({ status: 'completed', taskId });
  expect(resultText(last?.result as Record<string, unknown>)).toContain(
    'Long running operation completed. Duration: 3 seconds, Steps: 3.',
  );
});

test('its list change (a resource it registers) reaches a listen stream, and a re-list shows the resource', async () => {
  const changed = (m: Record<string, unknown>) => m.method === 'notifications/resources/list_changed';
  const promptsChanged = (m: Record<string, unknown>) => m.method === 'notifications/prompts/list_changed';
  const { handle } = await listen(client.url, { resourcesListChanged: true, promptsListChanged: true });
  try {
    const ack = await handle.next(isAck);
    // The process declares listChanged for its lists: the stream is promised them.
    expect((ack.params as { notifications: Record<string, unknown> }).notifications).toEqual({
      resourcesListChanged: true,
      promptsListChanged: true,
    });
    // The watch follows the process once the acknowledgement is out: a change made before it began
    // is not the watch's to see, so the tool is called until a change arrives (each call a new resource).
    let made = 0;
    while (!handle.messages.some(changed)) {
      const name = `stdio-${made++}.txt.gz`;
      const reply = await client.callTool(
        'gzip-file-as-resource',
        { name, data: `data:text/plain;base64,${Buffer.from('over stdio').toString('base64')}` },
        { tasks: false },
      );
      expect(reply.body.result?.isError).not.toBe(true);
      await sleep(100);
    }
    // The process's own notification, not the feed's catch-up after a gap (which writes every kind):
    // its prompts did not change.
    expect(handle.messages.some(promptsChanged)).toBe(false);
    expect(await resourceUris()).toContain(`demo://resource/session/stdio-${made - 1}.txt.gz`);
  } finally {
    handle.close();
  }
});
