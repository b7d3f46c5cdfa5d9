// A host as Claude Desktop or VS Code runs one: the TypeScript MCP SDK 1.x
// client starts `pds mcp` as a subprocess and talks to it over stdio.
//
//   node client.cjs SDK_DIR CALLS_JSON COMMAND [ARG...]
//
// SDK_DIR holds node_modules/@modelcontextprotocol/sdk (scripts/mcp-ts-client.sh
// installs it); CALLS_JSON is a file with [{"name": tool, "arguments": {...}}, ...].
// The child gets this process's environment. Prints one JSON object: the
// negotiated protocol version, the server's info, the listed tools and every
// call's result. The SDK validates each structuredContent against the tool's
// outputSchema (with Ajv) and throws when it does not fit: then this exits 1.
const { createRequire } = require('node:module');
const fs = require('node:fs');
const path = require('node:path');

const [sdkDir, callsFile, command, ...args] = process.argv.slice(2);
const sdk = createRequire(path.join(path.resolve(sdkDir), 'package.json'));
const { Client } = sdk('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = sdk('@modelcontextprotocol/sdk/client/stdio.js');

async function main() {
  const calls = JSON.parse(fs.readFileSync(callsFile, 'utf8'));
  const transport = new StdioClientTransport({ command, args, env: process.env, stderr: 'inherit' });
  // Note the protocol version of the initialize answer as it goes by.
  let negotiated = '';
  let handler;
  Object.defineProperty(transport, 'onmessage', {
    get() { return handler; },
    set(fn) {
      handler = (msg) => {
        if (msg && msg.result && typeof msg.result.protocolVersion === 'string') negotiated = msg.result.protocolVersion;
        if (fn) fn(msg);
      };
    },
  });
  const client = new Client({ name: 'pds-ts-test', version: '1.0.0' });
  await client.connect(transport);
  const list = await client.listTools();
  const results = [];
  for (const call of calls) {
    results.push(await client.callTool(call));
  }
  process.stdout.write(JSON.stringify({
    protocolVersion: negotiated,
    serverInfo: client.getServerVersion(),
    tools: list.tools,
    results,
  }));
  await client.close();
}

main().catch((err) => {
  process.stderr.write('tsclient: ' + (err && err.stack ? err.stack : String(err)) + '\n');
  process.exit(1);
});
