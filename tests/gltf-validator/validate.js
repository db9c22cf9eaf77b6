// Validate .glb files with the Khronos glTF validator; exit 1 if any has an error. Used by tests/gltf.rs.
const validator = require('gltf-validator');
const fs = require('fs');
(async () => {
  let failed = false;
  for (const f of process.argv.slice(2)) {
    const data = new Uint8Array(fs.readFileSync(f));
    const report = await validator.validateBytes(data, { maxIssues: 20 });
    const i = report.issues;
    console.log(`${f}: ${i.numErrors} errors, ${i.numWarnings} warnings, ${i.numInfos} infos, ${i.numHints} hints`);
    for (const m of i.messages) if (m.severity <= 1) console.log(`  ${m.severity === 0 ? 'error' : 'warning'} ${m.code} ${m.pointer || ''}: ${m.message}`);
    if (i.numErrors > 0) failed = true;
  }
  process.exit(failed ? 1 : 0);
})();
