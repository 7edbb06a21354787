// Last step of `npm run build`: copies the dashboard's static files (src/dashboard/static) next to
// its compiled modules (dist/dashboard/js, from `tsc -p src/dashboard/tsconfig.json`).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const from = path.join(root, 'src/dashboard/static');
const to = path.join(root, 'dist/dashboard');
if (!fs.existsSync(path.join(to, 'js/dashboard/main.js'))) {
  process.stderr.write('dist/dashboard/js is missing: run tsc -p src/dashboard/tsconfig.json first\n');
  process.exit(1);
}
fs.cpSync(from, to, { recursive: true });
