#!/usr/bin/env node
// Validates deploy/ offline (ctest: deploy.manifests, label deploy):
//   1. renders every kustomize overlay under deploy/k8s/overlays with `kubectl kustomize`;
//   2. checks every rendered object against the Kubernetes OpenAPI schemas (lib/schema.js);
//   3. checks what lmtrain needs of them (lib/semantics.js: PVCs, probes, headless Service,
//      Secrets, GPUs, resource limits, non-root);
//   4. checks deploy/docker/*.Dockerfile (lib/dockerfile.js: COPY sources exist, non-root);
//   5. checks that every flag the manifests and Dockerfiles pass to lm-server / lm-worker is
//      one the program accepts (its --help when built, else its sources).
//
//   node tests/deploy/validate_deploy.js [--repo DIR] [--server-bin PATH] [--worker-bin PATH]
//                                        [--kubectl PATH]   (default: $KUBECTL, else kubectl)
//
// Exit 0: all passed; 1: something failed (each failure printed with the object and field);
// 77: kubectl is not installed, so only the Dockerfile checks ran and passed (ctest reports
// the test as skipped).
"use strict";

const fs = require("fs");
const path = require("path");
const { execFileSync } = require("child_process");

const SKIP = 77;

function parseCommandLine(argv) {
  const opts = { repo: path.resolve(__dirname, "..", ".."), kubectl: process.env.KUBECTL || "kubectl" };
  for (let i = 0; i < argv.length; i++) {
    const m = /^--(repo|server-bin|worker-bin|kubectl)(?:=(.*))?$/.exec(argv[i]);
    if (!m) throw new Error(`unknown argument '${argv[i]}'`);
    const value = m[2] !== undefined ? m[2] : argv[++i];
    if (value === undefined) throw new Error(`--${m[1]} needs a value`);
    opts[m[1].replace(/-(.)/g, (_, c) => c.toUpperCase())] = value;
  }
  return opts;
}

function findKubectl(name) {
  try {
    execFileSync(name, ["version", "--client"], { stdio: "ignore", timeout: 30000 });
    return true;
  } catch {
    return false;
  }
}

function requireDeps() {
  try {
    return { YAML: require("yaml"), schema: require("./lib/schema") , probe: require.resolve("kubernetes-models/package.json") };
  } catch (e) {
    console.error(`deploy: ${e.message}\ndeploy: tests/deploy's npm packages are missing: run scripts/setup.sh (it runs npm ci --prefix tests/deploy)`);
    process.exit(1);
  }
}

function main() {
  const opts = parseCommandLine(process.argv.slice(2));
  const canRender = findKubectl(opts.kubectl);
  const { YAML, schema } = requireDeps();
  const { semanticErrors, programFlags } = require("./lib/semantics");
  const { dockerfileErrors } = require("./lib/dockerfile");
  const { knownFlags } = require("./lib/flags");

  let passed = 0;
  let failed = 0;
  const report = (name, errors) => {
    if (errors.length === 0) {
      passed++;
      console.log(`ok    ${name}`);
    } else {
      failed++;
      console.log(`FAIL  ${name}`);
      for (const e of errors) console.log(`        ${e}`);
    }
  };

  const usedFlags = []; // {program, flag, where}
  const overlaysDir = path.join(opts.repo, "deploy", "k8s", "overlays");
  const overlays = fs.existsSync(overlaysDir) ? fs.readdirSync(overlaysDir).filter((d) => fs.existsSync(path.join(overlaysDir, d, "kustomization.yaml"))).sort() : [];
  report("deploy/k8s has the cpu and gpu overlays", ["cpu", "gpu"].filter((o) => !overlays.includes(o)).map((o) => `missing deploy/k8s/overlays/${o}/kustomization.yaml`));

  for (const overlay of canRender ? overlays : []) {
    const dir = path.join(overlaysDir, overlay);
    let objects;
    try {
      const text = execFileSync(opts.kubectl, ["kustomize", dir], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 120000 });
      const docs = YAML.parseAllDocuments(text);
      const bad = docs.filter((d) => d.errors.length);
      if (bad.length) throw new Error(bad[0].errors[0].message);
      objects = docs.map((d) => d.toJS()).filter((o) => o !== null);
    } catch (e) {
      report(`overlay ${overlay}: kubectl kustomize renders it`, [String(e.stderr || e.message).trim()]);
      continue;
    }
    report(`overlay ${overlay}: kubectl kustomize renders it (${objects.length} objects)`, objects.length ? [] : ["rendered nothing"]);
    report(`overlay ${overlay}: every object matches the Kubernetes 1.27 schemas`, objects.flatMap((o) => schema.schemaErrors(o)));
    report(`overlay ${overlay}: lmtrain's deployment rules`, semanticErrors(overlay, objects));
    for (const f of programFlags(objects)) usedFlags.push({ ...f, where: `overlay ${overlay}: ${f.where}` });
  }

  const dockerDir = path.join(opts.repo, "deploy", "docker");
  const dockerfiles = fs.existsSync(dockerDir) ? fs.readdirSync(dockerDir).filter((f) => /(^|\.)Dockerfile$/.test(f)).sort() : [];
  report("deploy/docker has the server, CPU worker and CUDA worker Dockerfiles", ["server.Dockerfile", "worker-cpu.Dockerfile", "worker-cuda.Dockerfile"].filter((f) => !dockerfiles.includes(f)).map((f) => `missing deploy/docker/${f}`));
  for (const f of dockerfiles) {
    const { errors, program, flags } = dockerfileErrors(path.join(dockerDir, f), opts.repo);
    report(`deploy/docker/${f}: COPY sources exist, non-root USER, exec-form ENTRYPOINT/CMD`, errors);
    if (program === "lm-server" || program === "lm-worker") {
      for (const flag of flags) usedFlags.push({ program, flag, where: `deploy/docker/${f} ENTRYPOINT/CMD` });
    }
  }

  const bins = { "lm-server": opts.serverBin, "lm-worker": opts.workerBin };
  for (const program of ["lm-server", "lm-worker"]) {
    let known;
    try {
      known = knownFlags(program, { bin: bins[program], repo: opts.repo });
    } catch (e) {
      report(`${program}: its flags can be listed`, [e.message]);
      continue;
    }
    const uses = usedFlags.filter((u) => u.program === program);
    const unknown = uses.filter((u) => !known.flags.has(u.flag)).map((u) => `${u.where}: --${u.flag} is not an ${program} flag`);
    report(`${program}: the ${uses.length} flags deploy/ passes exist (per ${known.source})`, [...new Set(unknown)]);
  }

  console.log(`\ndeploy: ${passed} passed, ${failed} failed`);
  if (!failed && !canRender) {
    console.log(`SKIP: '${opts.kubectl}' is not installed, so the kustomize overlays were not rendered or checked (kubectl has no current Debian package; install it from the Kubernetes apt repository to run this test)`);
    process.exit(SKIP);
  }
  process.exit(failed ? 1 : 0);
}

main();
