/** The suite's entry inside VS Code's extension host: runs the mocha files beside it. */
import { readdirSync } from 'node:fs';
import * as path from 'node:path';
import Mocha from 'mocha';

export function run(): Promise<void> {
  const mocha = new Mocha({ ui: 'bdd', color: false, timeout: 60000, reporter: 'spec' });
  for (const file of readdirSync(__dirname)) if (file.endsWith('.test.js')) mocha.addFile(path.join(__dirname, file));
  return new Promise((resolve, reject) => {
    mocha.run((failures) => (failures > 0 ? reject(new Error(`${failures} VS Code tests failed`)) : resolve()));
  });
}
