// Proves the deploy validator fails when deploy/ is broken (ctest: deploy.validator_self_test):
// each case breaks one thing in the rendered overlays or in a Dockerfile and expects the
// named failure; one case breaks a manifest file on disk and runs validate_deploy.js on it.
//   node --test tests/deploy/validate_deploy_test.js
"use strict";

const test = require("node:test");
const assert = require("node:assert");
const fs = require("fs");
const os = require("os");
const path = require("path");
const { execFileSync, spawnSync } = require("child_process");
const YAML = require("yaml");
const { schemaErrors } = require("./lib/schema");
const { semanticErrors } = require("./lib/semantics");
const { dockerfileErrors } = require("./lib/dockerfile");
const { flagsFromHelp, flagsFromSources } = require("./lib/flags");

const REPO = path.resolve(__dirname, "..", "..");
const KUBECTL = process.env.KUBECTL || "kubectl";
const haveKubectl = spawnSync(KUBECTL, ["version", "--client"], { stdio: "ignore" }).status === 0;
const noKubectl = haveKubectl ? false : "kubectl is not installed";

function render(overlay) {
  const text = execFileSync(KUBECTL, ["kustomize", path.join(REPO, "deploy", "k8s", "overlays", overlay)], { encoding: "utf8" });
  return YAML.parseAllDocuments(text).map((d) => d.toJS()).filter((o) => o !== null);
}

const rendered = {};
function objects(overlay) {
  if (!rendered[overlay]) rendered[overlay] = render(overlay);
  return structuredClone(rendered[overlay]);
}
const kind = (objs, k, name) => objs.find((o) => o.kind === k && (!name || o.metadata.name.startsWith(name)));
const server = (objs) => kind(objs, "Deployment", "lm-server");
const serverContainer = (objs) => server(objs).spec.template.spec.containers[0];
const workers = (objs) => kind(objs, "StatefulSet", "lm-worker");
const workerContainer = (objs) => workers(objs).spec.template.spec.containers[0];

function allErrors(overlay, objs) {
  return [...objs.flatMap((o) => schemaErrors(o)), ...semanticErrors(overlay, objs)];
}

function expectFailure(overlay, breakIt, pattern) {
  const objs = objects(overlay);
  breakIt(objs);
  const errors = allErrors(overlay, objs);
  assert.ok(errors.some((e) => pattern.test(e)), `expected an error matching ${pattern}, got:\n${errors.join("\n") || "(none)"}`);
}

test("the committed overlays pass", { skip: noKubectl }, () => {
  for (const overlay of ["cpu", "gpu"]) assert.deepStrictEqual(allErrors(overlay, objects(overlay)), []);
});

const cases = [
  ["cpu", "a schema type error", (o) => (server(o).spec.replicas = "1"), /spec\/replicas must be integer/],
  ["cpu", "a misspelt field", (o) => { const c = serverContainer(o); c.readinesProbe = c.readinessProbe; delete c.readinessProbe; }, /unknown field .*readinesProbe/],
  ["cpu", "a missing required field", (o) => delete workers(o).spec.selector, /must have required property 'selector'|required property selector/],
  ["cpu", "no readiness probe", (o) => delete serverContainer(o).readinessProbe, /no HTTP readinessProbe/],
  ["cpu", "liveness on the wrong path", (o) => (serverContainer(o).livenessProbe.httpGet.path = "/"), /livenessProbe path is \/, want \/healthz/],
  ["cpu", "a probe on an undeclared port", (o) => (serverContainer(o).readinessProbe.httpGet.port = "web"), /readinessProbe port web is not a port/],
  ["cpu", "two server replicas", (o) => (server(o).spec.replicas = 2), /replicas must be 1/],
  ["cpu", "a rolling server update", (o) => (server(o).spec.strategy = { type: "RollingUpdate" }), /strategy must be Recreate/],
  ["cpu", "the dashboard on loopback", (o) => (serverContainer(o).args = serverContainer(o).args.map((a) => a.replace(/^--http-listen=.*/, "--http-listen=127.0.0.1:8080"))), /--http-listen=127.0.0.1:8080 is not reachable/],
  ["cpu", "no data PVC", (o) => o.splice(o.indexOf(kind(o, "PersistentVolumeClaim", "lmtrain-data")), 1), /names missing PersistentVolumeClaim lmtrain-data/],
  ["cpu", "a ReadWriteOnce shared volume", (o) => (kind(o, "PersistentVolumeClaim", "lmtrain-shared").spec.accessModes = ["ReadWriteOnce"]), /accessModes must include ReadWriteMany/],
  ["cpu", "workers without the shared volume", (o) => { const c = workerContainer(o); c.volumeMounts = c.volumeMounts.filter((m) => m.mountPath !== "/shared"); }, /does not mount PersistentVolumeClaim lmtrain-shared at \/shared/],
  ["cpu", "a data root only the server sees", (o) => (serverContainer(o).args = serverContainer(o).args.map((a) => a.replace(/^--data-roots=.*/, "--data-roots=/var/lib/lmtrain/datasets"))), /--data-roots \/var\/lib\/lmtrain\/datasets is not on the shared volume/],
  ["cpu", "a StatefulSet without its headless Service", (o) => (workers(o).spec.serviceName = "nope"), /serviceName 'nope' names no Service/],
  ["cpu", "a worker Service that is not headless", (o) => delete kind(o, "Service", "lm-worker").spec.clusterIP, /must be headless/],
  ["cpu", "workers advertising their bare pod name", (o) => (workerContainer(o).args = workerContainer(o).args.map((a) => a.replace(/^--advertise-address=.*/, "--advertise-address=$(POD_NAME)"))), /--advertise-address must be \$\(POD_NAME\)\.lm-worker/],
  ["cpu", "a missing Secret", (o) => o.splice(o.indexOf(kind(o, "Secret")), 1), /names missing Secret lmtrain-tokens/],
  ["cpu", "a worker token the server does not know", (o) => (kind(o, "Secret").data["worker-token"] = Buffer.from("other").toString("base64")), /not a worker token/],
  ["cpu", "no memory limit", (o) => delete workerContainer(o).resources.limits.memory, /container lm-worker has no memory limits/],
  ["cpu", "a root container", (o) => (server(o).spec.template.spec.securityContext.runAsNonRoot = false), /does not set runAsNonRoot: true/],
  ["cpu", "an object outside the namespace", (o) => (kind(o, "Service", "lm-server").metadata.namespace = "default"), /Service\/lm-server: not in namespace lmtrain/],
  ["cpu", "a GPU request in the CPU overlay", (o) => (workerContainer(o).resources.limits["nvidia.com/gpu"] = 1), /not the gpu overlay but requests nvidia.com\/gpu/],
  ["gpu", "no GPU limit", (o) => delete workerContainer(o).resources.limits["nvidia.com/gpu"], /no nvidia.com\/gpu limit/],
  ["gpu", "no GPU request", (o) => delete workerContainer(o).resources.requests["nvidia.com/gpu"], /requests no nvidia.com\/gpu/],
  ["gpu", "the CPU image", (o) => (workerContainer(o).image = "lmtrain/lm-worker:latest"), /is not a CUDA image/],
  ["gpu", "no GPU toleration", (o) => delete workers(o).spec.template.spec.tolerations, /no toleration for nvidia.com\/gpu/],
];
for (const [overlay, name, breakIt, pattern] of cases) {
  test(`${overlay} overlay fails on ${name}`, { skip: noKubectl }, () => expectFailure(overlay, breakIt, pattern));
}

test("a broken manifest file fails validate_deploy.js", { skip: noKubectl }, () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "lmtrain-deploy-"));
  try {
    fs.cpSync(path.join(REPO, "deploy"), path.join(tmp, "deploy"), { recursive: true });
    for (const dir of ["server", "worker/agent"]) fs.cpSync(path.join(REPO, dir), path.join(tmp, dir), { recursive: true });
    const file = path.join(tmp, "deploy", "k8s", "base", "server-deployment.yaml");
    const text = fs.readFileSync(file, "utf8");
    assert.match(text, /readinessProbe:/);
    fs.writeFileSync(file, text.replace("readinessProbe:", "readinesProbe:"));
    const run = spawnSync(process.execPath, [path.join(__dirname, "validate_deploy.js"), "--repo", tmp], { encoding: "utf8" });
    assert.strictEqual(run.status, 1, run.stdout + run.stderr);
    assert.match(run.stdout, /unknown field \/spec\/template\/spec\/containers\/0\/readinesProbe/);
    assert.match(run.stdout, /no HTTP readinessProbe/);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
});

function dockerRepo(dockerfile, extra = {}) {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "lmtrain-docker-"));
  fs.mkdirSync(path.join(tmp, "server"));
  fs.writeFileSync(path.join(tmp, "server", "main.cc"), "");
  fs.mkdirSync(path.join(tmp, "build"));
  for (const [name, text] of Object.entries(extra)) fs.writeFileSync(path.join(tmp, name), text);
  const file = path.join(tmp, "x.Dockerfile");
  fs.writeFileSync(file, dockerfile);
  return { tmp, file };
}

const GOOD = `FROM debian:12 AS build
COPY server/ server/
RUN true
FROM debian:12
COPY --from=build /out/ /opt/
USER 10001:10001
ENTRYPOINT ["lm-server"]
CMD ["--listen", "0.0.0.0:50051", "--data-dir=/d"]
`;

test("a good Dockerfile passes and its flags are found", () => {
  const { tmp, file } = dockerRepo(GOOD);
  const r = dockerfileErrors(file, tmp);
  assert.deepStrictEqual(r.errors, []);
  assert.strictEqual(r.program, "lm-server");
  assert.deepStrictEqual(r.flags, ["listen", "data-dir"]);
});

const dockerCases = [
  ["a COPY source that does not exist", GOOD.replace("COPY server/ server/", "COPY servr/ \\\n  server/"), /:2: COPY source servr\/ does not exist/],
  ["a COPY source outside the context", GOOD.replace("COPY server/ server/", "COPY ../x server/"), /outside the build context/],
  ["a COPY source .dockerignore excludes", GOOD.replace("COPY server/ server/", "COPY build/ build/"), /excluded by .dockerignore/, { ".dockerignore": "build*/\n" }],
  ["--from naming no stage", GOOD.replace("--from=build", "--from=builder"), /--from=builder names no earlier stage/],
  ["no USER", GOOD.replace("USER 10001:10001\n", ""), /sets no USER/],
  ["USER root", GOOD.replace("USER 10001:10001", "USER root"), /runs as root/],
  ["a shell-form CMD", GOOD.replace(/CMD .*/, "CMD lm-server --listen x"), /CMD must be a JSON array/],
];
for (const [name, text, pattern, extra] of dockerCases) {
  test(`a Dockerfile with ${name} fails`, () => {
    const { tmp, file } = dockerRepo(text, extra);
    const { errors } = dockerfileErrors(file, tmp);
    assert.ok(errors.some((e) => pattern.test(e)), `expected ${pattern}, got:\n${errors.join("\n") || "(none)"}`);
  });
}

test("flags come from --help output and from sources", () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "lmtrain-flags-"));
  const bin = path.join(tmp, "lm-fake");
  fs.writeFileSync(bin, "#!/bin/sh\necho 'usage: lm-fake [flags]' >&2\necho '  --listen               gRPC address (default: x)' >&2\necho '  --data-dir             folder' >&2\n");
  fs.chmodSync(bin, 0o755);
  assert.deepStrictEqual([...flagsFromHelp(bin)].sort(), ["data-dir", "listen"]);
  fs.mkdirSync(path.join(tmp, "server"));
  fs.writeFileSync(path.join(tmp, "server", "main.cc"), 'cl.AddString("listen", &a, "x");\ncl.AddInt( "local-worker", &b, "y");\n');
  assert.deepStrictEqual([...flagsFromSources("lm-server", tmp)].sort(), ["listen", "local-worker"]);
});
