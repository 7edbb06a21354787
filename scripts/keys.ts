// `npm run keys -- create --user <id> [--plan <plan>] [--json]` | `list [--user <id>]` | `revoke <id|prefix|key>`
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createCredential, listCredentials, revokeCredential } from '../src/catalog/api-keys.js';
import { Catalog } from '../src/catalog/catalog.js';
import { loadConfigOrExit } from '../src/config.js';

const USAGE = 'usage: npm run keys -- create --user <id> [--plan free|pro|business] [--json] | list [--user <id>] [--json] | revoke <key-id|key-prefix|key>';

async function main() {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: { user: { type: 'string' }, plan: { type: 'string' }, json: { type: 'boolean', default: false } },
  });
  const [command, arg] = positionals;
  // With `npm start` on embedded defaults, the catalog's address is in data/runtime.json.
  const runtime = path.resolve(process.env.DATA_DIR ?? './data', 'runtime.json');
  if (!process.env.MONGO_URL && fs.existsSync(runtime)) process.env.MONGO_URL = (JSON.parse(fs.readFileSync(runtime, 'utf8')) as { mongoUrl: string }).mongoUrl;
  const config = loadConfigOrExit();
  const catalog = await Catalog.connect(config.mongoUrl);
  try {
    switch (command) {
      case 'create': {
        if (!values.user) throw new Error('create needs --user <id>');
        const cred = await createCredential(catalog, values.user, values.plan);
        if (values.json) process.stdout.write(JSON.stringify({ user_id: cred.userId, key: cred.key, secret: cred.secret, plan: cred.plan, key_id: cred.keyId }) + '\n');
        else process.stdout.write(`user   ${cred.userId} (plan ${cred.plan})\nkey    ${cred.key}\nsecret ${cred.secret}\nkey id ${cred.keyId} (for signing URLs with the client SDK)\nStore both now: the key is kept only as a hash.\n`);
        break;
      }
      case 'list': {
        const rows = await listCredentials(catalog, values.user);
        if (values.json) process.stdout.write(JSON.stringify(rows) + '\n');
        else for (const r of rows) process.stdout.write(`${r.id}  ${r.userId}  ${r.keyPrefix}…  ${r.revokedAt ? 'revoked ' + r.revokedAt.toISOString() : 'active'}\n`);
        break;
      }
      case 'revoke': {
        if (!arg) throw new Error('revoke needs a key id, key prefix or key');
        const n = await revokeCredential(catalog, arg);
        process.stdout.write(values.json ? JSON.stringify({ revoked: n }) + '\n' : `revoked ${n} key(s)\n`);
        if (n === 0) process.exitCode = 1;
        break;
      }
      default:
        throw new Error(USAGE);
    }
  } finally {
    await catalog.close();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
