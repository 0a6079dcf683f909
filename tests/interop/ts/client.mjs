// The official MCP TypeScript client (@modelcontextprotocol/client, pinned in package.json)
// against a django-mcp server: tests/interop/test_ts_client.py runs it and asserts on what
// it prints.
//
// Usage: node client.mjs http://127.0.0.1:PORT/mcp
//
// It connects with versionNegotiation "auto" (server/discover, no initialize), runs a fixed
// list of checks against the testproject WITH its conformance app, and prints ONE JSON
// object on stdout: what it observed, not a verdict (the Python test compares). Any error
// ends the script with exit code 1 and the error on stderr, naming the step it happened in.
import { readFileSync } from 'node:fs';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const REQUEST_TIMEOUT_MS = 30_000; // any one request
const NOTIFICATION_TIMEOUT_MS = 10_000; // a list_changed after the change
const STRAGGLER_MS = 500; // more notifications of the same change, after the first one
const WATCHDOG_MS = 100_000; // the whole script (the Python side kills it at 120 s)

const DUNE_ISBN = '9780441172719';

let currentStep = 'start';

function fail(error) {
    process.stderr.write(`client.mjs failed in step "${currentStep}": ${error?.stack ?? error}\n`);
    if (error?.code !== undefined) {
        const data = JSON.stringify(error.data) ?? '';
        process.stderr.write(`  code=${JSON.stringify(error.code)} data=${data.slice(0, 2000)}\n`);
    }
    process.exit(1);
}

process.on('unhandledRejection', fail);
setTimeout(() => fail(new Error(`watchdog: still running after ${WATCHDOG_MS} ms`)), WATCHDOG_MS).unref();

const url = process.argv[2];
if (!url) {
    process.stderr.write('usage: node client.mjs MCP_URL\n');
    process.exit(2);
}

/** The SDK's own version, as installed (package.json pins it). */
function sdkVersion() {
    const manifest = new URL('./node_modules/@modelcontextprotocol/client/package.json', import.meta.url);
    return JSON.parse(readFileSync(manifest, 'utf8')).version;
}

/** The progressToken the client put in each tools/call it sent, by tool name (read from
 * the request body on its way out, so the test can match what the server echoes). */
const sentProgressTokens = {};
async function recordingFetch(input, init = {}) {
    if (typeof init.body === 'string') {
        try {
            const message = JSON.parse(init.body);
            const token = message?.params?._meta?.progressToken;
            if (message?.method === 'tools/call' && token !== undefined) {
                sentProgressTokens[message.params.name] = token;
            }
        } catch {
            // not JSON: nothing to record
        }
    }
    return fetch(input, init);
}

function waitFor(predicate, ms, what) {
    return new Promise((resolve, reject) => {
        const started = Date.now();
        const tick = () => {
            if (predicate()) resolve();
            else if (Date.now() - started > ms) reject(new Error(`timed out after ${ms} ms waiting for ${what}`));
            else setTimeout(tick, 25);
        };
        tick();
    });
}

const sleep = ms => new Promise(resolve => setTimeout(resolve, ms));

async function step(name, body) {
    currentStep = name;
    return await body();
}

const observed = { sdk: { name: '@modelcontextprotocol/client', version: sdkVersion() } };
const clientErrors = [];
const elicitations = [];
const notifications = [];
const options = { timeout: REQUEST_TIMEOUT_MS };

const client = new Client(
    { name: 'django-mcp-ts-interop', version: '1.0' },
    { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: 'auto' } }
);
client.onerror = error => clientErrors.push(`${error?.constructor?.name}: ${error?.message}`);
client.setRequestHandler('elicitation/create', async request => {
    const { message, requestedSchema } = request.params;
    elicitations.push({ message, requestedSchema });
    return { action: 'accept', content: { name: 'Ada' } };
});
for (const method of [
    'notifications/tools/list_changed',
    'notifications/prompts/list_changed',
    'notifications/resources/list_changed',
    'notifications/resources/updated'
]) {
    client.setNotificationHandler(method, notification => notifications.push(notification.method));
}
client.fallbackNotificationHandler = async notification => notifications.push(`unrouted ${notification.method}`);

try {
    await step('connect', async () => {
        const transport = new StreamableHTTPClientTransport(new URL(url), { fetch: recordingFetch });
        await client.connect(transport);
        const discovered = client.getDiscoverResult();
        observed.discover = {
            protocolVersion: client.getNegotiatedProtocolVersion() ?? null,
            era: client.getProtocolEra() ?? null,
            supportedVersions: discovered?.supportedVersions ?? null,
            serverName: client.getServerVersion()?.name ?? null,
            instructions: client.getInstructions() ?? null,
            capabilities: client.getServerCapabilities() ?? null
        };
    });

    await step('tools/list', async () => {
        const listed = await client.listTools(undefined, options);
        observed.tools = listed.tools.map(tool => tool.name);
    });

    await step('tools/call search_books', async () => {
        const result = await client.callTool({ name: 'search_books', arguments: { query: 'dune' } }, options);
        observed.searchBooks = { isError: result.isError ?? false, structuredContent: result.structuredContent ?? null };
    });

    await step('tools/call get_book (unknown ISBN)', async () => {
        const result = await client.callTool({ name: 'get_book', arguments: { isbn: '0000000000000' } }, options);
        observed.toolError = { isError: result.isError ?? false, content: result.content };
    });

    await step('tools/call whoami', async () => {
        const result = await client.callTool({ name: 'whoami', arguments: {} }, options);
        observed.whoami = result.content.map(item => item.text);
    });

    await step('tools/call test_tool_with_progress', async () => {
        const progress = [];
        const result = await client.callTool({ name: 'test_tool_with_progress', arguments: {} }, {
            ...options,
            onprogress: update => progress.push(update)
        });
        observed.progress = {
            sentToken: sentProgressTokens.test_tool_with_progress ?? null,
            count: progress.length,
            notifications: progress,
            isError: result.isError ?? false,
            result: result.content.map(item => item.text)
        };
    });

    await step('tools/call test_input_required_result_elicitation', async () => {
        const result = await client.callTool(
            { name: 'test_input_required_result_elicitation', arguments: {} },
            options
        );
        observed.elicitation = {
            requests: [...elicitations],
            isError: result.isError ?? false,
            result: result.content.map(item => item.text)
        };
    });

    await step('resources/read bookshop://about', async () => {
        const read = await client.readResource({ uri: 'bookshop://about' }, options);
        observed.resource = read.contents.map(({ uri, mimeType, text }) => ({ uri, mimeType, text }));
    });

    await step('prompts/get review_request', async () => {
        const prompt = await client.getPrompt(
            { name: 'review_request', arguments: { isbn: DUNE_ISBN, tone: 'friendly' } },
            options
        );
        observed.prompt = prompt.messages;
    });

    await step('completion/complete', async () => {
        if (!client.getServerCapabilities()?.completions) {
            observed.completion = null;
            return;
        }
        const ref = { type: 'ref/prompt', name: 'review_request' };
        const tone = await client.complete({ ref, argument: { name: 'tone', value: 'cr' } }, options);
        const isbn = await client.complete({ ref, argument: { name: 'isbn', value: '978044117' } }, options);
        observed.completion = { tone: tone.completion.values, isbn: isbn.completion.values };
    });

    await step('subscriptions/listen', async () => {
        const subscription = await client.listen({ toolsListChanged: true }, options);
        const before = notifications.length;
        const trigger = await client.callTool({ name: 'test_trigger_tool_change', arguments: {} }, options);
        await waitFor(
            () => notifications.slice(before).includes('notifications/tools/list_changed'),
            NOTIFICATION_TIMEOUT_MS,
            'notifications/tools/list_changed'
        );
        await sleep(STRAGGLER_MS);
        await subscription.close();
        observed.listen = {
            honoredFilter: subscription.honoredFilter,
            trigger: trigger.content.map(item => item.text),
            notifications: notifications.slice(before),
            closed: await subscription.closed
        };
    });

    await step('close', async () => {
        await client.close();
    });
} catch (error) {
    fail(error);
}

observed.clientErrors = clientErrors;
process.stdout.write(JSON.stringify(observed) + '\n', () => process.exit(0));
