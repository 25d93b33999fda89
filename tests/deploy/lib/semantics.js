// What lmtrain's Kubernetes manifests must say, beyond being schema-valid: checked on the
// objects one overlay renders to (`kubectl kustomize deploy/k8s/overlays/NAME`).
//
//   semanticErrors("gpu", objects) -> ["StatefulSet/lm-worker: container lm-worker requests no nvidia.com/gpu", ...]
//
// The rules (deploy/README.md describes the layout they protect):
//  - one Namespace, and every other object in it;
//  - lm-server: a Deployment with 1 replica and the Recreate strategy (one SQLite writer), a
//    PVC-backed --data-dir, HTTP /readyz readiness and /healthz liveness probes on a declared
//    port, gRPC and HTTP listening on all interfaces, a Service exposing both ports;
//  - lm-worker: a StatefulSet whose serviceName is a headless Service (clusterIP: None) that
//    selects its pods; workers advertise $(POD_NAME).<that service>; the worker token comes
//    from a Secret;
//  - one ReadWriteMany PVC mounted by the server and every worker at the same path, holding
//    the server's --artifacts folder (job outputs are written by workers, read by all ranks)
//    and its --data-roots, if any (the server checks job paths there, workers read them);
//  - every container has cpu and memory requests and limits, runs as non-root without
//    privilege escalation; every Secret, ConfigMap and PVC a pod names exists (with the key);
//  - the worker token's SHA-256 is a worker entry of the server's tokens file;
//  - the "gpu" overlay's workers request and limit nvidia.com/gpu and run a CUDA image; other
//    overlays request no GPU.
"use strict";

const crypto = require("crypto");
const YAML = require("yaml");
const { objectName } = require("./schema");

const CLUSTER_SCOPED = new Set(["Namespace", "PersistentVolume", "StorageClass", "ClusterRole", "ClusterRoleBinding"]);

// Parses "--name=value" / "--name value" container args into a Map name -> value.
function parseArgs(args) {
  const flags = new Map();
  const list = args || [];
  for (let i = 0; i < list.length; i++) {
    const a = String(list[i]);
    if (!a.startsWith("--")) continue;
    const eq = a.indexOf("=");
    if (eq >= 0) flags.set(a.slice(2, eq), a.slice(eq + 1));
    else if (i + 1 < list.length && !String(list[i + 1]).startsWith("--")) flags.set(a.slice(2), String(list[++i]));
    else flags.set(a.slice(2), "");
  }
  return flags;
}

function podSpecOf(obj) {
  if (["Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job"].includes(obj.kind)) {
    return obj.spec && obj.spec.template && obj.spec.template.spec;
  }
  if (obj.kind === "Pod") return obj.spec;
  return null;
}

function containersOf(pod) {
  return [...((pod && pod.initContainers) || []), ...((pod && pod.containers) || [])];
}

function selects(selector, labels) {
  if (!selector || Object.keys(selector).length === 0) return false;
  return Object.entries(selector).every(([k, v]) => labels && labels[k] === v);
}

// The volume backing `mountPath` in container `c` of pod spec `pod`, or null.
function volumeAt(pod, c, mountPath) {
  const m = (c.volumeMounts || []).find((vm) => vm.mountPath === mountPath);
  return m ? (pod.volumes || []).find((v) => v.name === m.name) || null : null;
}

// The mount of `c` whose path contains `file` (the longest), or null.
function mountHolding(c, file) {
  let best = null;
  for (const m of c.volumeMounts || []) {
    const p = m.mountPath.replace(/\/+$/, "");
    if ((file === p || file.startsWith(p + "/")) && (!best || p.length > best.mountPath.length)) best = m;
  }
  return best;
}

function decodeSecret(secret, key) {
  if (secret.stringData && key in secret.stringData) return String(secret.stringData[key]);
  if (secret.data && key in secret.data) return Buffer.from(String(secret.data[key]).replace(/\s/g, ""), "base64").toString("utf8");
  return null;
}

class Checker {
  constructor(overlay, objects) {
    this.overlay = overlay;
    this.objects = objects;
    this.errors = [];
  }
  fail(obj, message) {
    this.errors.push(`${typeof obj === "string" ? obj : objectName(obj)}: ${message}`);
  }
  all(kind) {
    return this.objects.filter((o) => o && o.kind === kind);
  }
  find(kind, name) {
    return this.objects.find((o) => o && o.kind === kind && o.metadata && o.metadata.name === name) || null;
  }

  run() {
    this.checkNamespace();
    for (const obj of this.objects) {
      const pod = podSpecOf(obj);
      if (pod) this.checkPod(obj, pod);
    }
    const server = this.checkServer();
    const workers = this.checkWorkers();
    if (server && workers) this.checkSharedVolume(server, workers);
    if (server && workers) this.checkTokens(server, workers);
    return this.errors;
  }

  checkNamespace() {
    const namespaces = this.all("Namespace");
    if (namespaces.length !== 1) {
      this.fail("overlay", `expected one Namespace object, found ${namespaces.length}`);
      return;
    }
    const ns = namespaces[0].metadata.name;
    for (const o of this.objects) {
      if (CLUSTER_SCOPED.has(o.kind)) continue;
      if (!o.metadata || o.metadata.namespace !== ns) this.fail(o, `not in namespace ${ns}`);
    }
  }

  // Resources, security context and references of every pod template.
  checkPod(obj, pod) {
    const psc = pod.securityContext || {};
    for (const c of containersOf(pod)) {
      const where = `container ${c.name}`;
      for (const kind of ["requests", "limits"]) {
        for (const r of ["cpu", "memory"]) {
          if (!c.resources || !c.resources[kind] || c.resources[kind][r] === undefined) this.fail(obj, `${where} has no ${r} ${kind}`);
        }
      }
      const csc = c.securityContext || {};
      const nonRoot = csc.runAsNonRoot !== undefined ? csc.runAsNonRoot : psc.runAsNonRoot;
      const uid = csc.runAsUser !== undefined ? csc.runAsUser : psc.runAsUser;
      if (nonRoot !== true) this.fail(obj, `${where} does not set runAsNonRoot: true`);
      if (uid === 0) this.fail(obj, `${where} runs as uid 0`);
      if (csc.allowPrivilegeEscalation !== false) this.fail(obj, `${where} does not set allowPrivilegeEscalation: false`);
      if (csc.privileged === true) this.fail(obj, `${where} is privileged`);
      for (const m of c.volumeMounts || []) {
        if (!(pod.volumes || []).some((v) => v.name === m.name)) this.fail(obj, `${where} mounts undefined volume ${m.name}`);
      }
      for (const e of c.env || []) this.checkEnvRef(obj, where, e);
      for (const e of c.envFrom || []) {
        if (e.secretRef && !this.find("Secret", e.secretRef.name)) this.fail(obj, `${where} envFrom names missing Secret ${e.secretRef.name}`);
        if (e.configMapRef && !this.find("ConfigMap", e.configMapRef.name)) this.fail(obj, `${where} envFrom names missing ConfigMap ${e.configMapRef.name}`);
      }
    }
    for (const v of pod.volumes || []) this.checkVolumeRef(obj, v);
  }

  checkEnvRef(obj, where, e) {
    const from = e.valueFrom || {};
    for (const [ref, kind] of [["secretKeyRef", "Secret"], ["configMapKeyRef", "ConfigMap"]]) {
      if (!from[ref]) continue;
      const target = this.find(kind, from[ref].name);
      if (!target) this.fail(obj, `${where} env ${e.name} names missing ${kind} ${from[ref].name}`);
      else if (!((target.data && from[ref].key in target.data) || (target.stringData && from[ref].key in target.stringData))) {
        this.fail(obj, `${where} env ${e.name}: ${kind} ${from[ref].name} has no key ${from[ref].key}`);
      }
    }
  }

  checkVolumeRef(obj, v) {
    const refs = [
      [v.secret && v.secret.secretName, "Secret", v.secret],
      [v.configMap && v.configMap.name, "ConfigMap", v.configMap],
      [v.persistentVolumeClaim && v.persistentVolumeClaim.claimName, "PersistentVolumeClaim", null],
    ];
    for (const [name, kind, src] of refs) {
      if (!name) continue;
      const target = this.find(kind, name);
      if (!target) {
        this.fail(obj, `volume ${v.name} names missing ${kind} ${name}`);
        continue;
      }
      for (const item of (src && src.items) || []) {
        if (!(target.data && item.key in target.data)) this.fail(obj, `volume ${v.name}: ${kind} ${name} has no key ${item.key}`);
      }
    }
  }

  // The lm-server Deployment and its Service; returns {obj, pod, c, args} or null.
  checkServer() {
    const server = this.all("Deployment").find((d) => containersOf(podSpecOf(d)).some((c) => c.name === "lm-server"));
    if (!server) {
      this.fail("overlay", "no Deployment with an lm-server container");
      return null;
    }
    const pod = podSpecOf(server);
    const c = pod.containers.find((x) => x.name === "lm-server");
    const args = parseArgs(c.args);
    if (server.spec.replicas !== 1) this.fail(server, `replicas must be 1 (SQLite has one writer), got ${server.spec.replicas}`);
    if (!server.spec.strategy || server.spec.strategy.type !== "Recreate") this.fail(server, "strategy must be Recreate (no two lm-servers on one database)");
    for (const [flag, port] of [["listen", 50051], ["http-listen", 8080]]) {
      const v = args.get(flag);
      if (v === undefined) this.fail(server, `lm-server has no --${flag}`);
      else if (!v.startsWith("0.0.0.0:") && !v.startsWith("[::]:")) this.fail(server, `--${flag}=${v} is not reachable from outside the pod (use 0.0.0.0:${port})`);
    }
    const dataDir = args.get("data-dir");
    const dataVolume = dataDir && volumeAt(pod, c, dataDir);
    if (!dataDir) this.fail(server, "lm-server has no --data-dir");
    else if (!dataVolume || !dataVolume.persistentVolumeClaim) this.fail(server, `--data-dir ${dataDir} is not a mounted PersistentVolumeClaim`);
    this.checkProbe(server, c, "readinessProbe", "/readyz");
    this.checkProbe(server, c, "livenessProbe", "/healthz");
    this.checkServerService(server, c);
    return { obj: server, pod, c, args };
  }

  checkProbe(obj, c, probe, path) {
    const p = c[probe];
    if (!p || !p.httpGet) {
      this.fail(obj, `container ${c.name} has no HTTP ${probe}`);
      return;
    }
    if (p.httpGet.path !== path) this.fail(obj, `${probe} path is ${p.httpGet.path}, want ${path}`);
    const port = p.httpGet.port;
    const declared = (c.ports || []).some((cp) => cp.name === port || cp.containerPort === port);
    if (!declared) this.fail(obj, `${probe} port ${port} is not a port of container ${c.name}`);
  }

  checkServerService(server, c) {
    const labels = server.spec.template.metadata.labels;
    const svc = this.all("Service").find((s) => s.spec && s.spec.clusterIP !== "None" && selects(s.spec.selector, labels));
    if (!svc) {
      this.fail(server, "no (non-headless) Service selects the lm-server pods");
      return;
    }
    for (const want of [50051, 8080]) {
      const port = (svc.spec.ports || []).find((p) => p.port === want);
      if (!port) {
        this.fail(svc, `exposes no port ${want}`);
        continue;
      }
      const target = port.targetPort === undefined ? port.port : port.targetPort;
      if (!(c.ports || []).some((cp) => cp.name === target || cp.containerPort === target)) {
        this.fail(svc, `port ${want} targets ${target}, which container lm-server does not declare`);
      }
    }
  }

  // The lm-worker StatefulSet(s) and their headless Service; returns [{obj, pod, c, args}].
  checkWorkers() {
    const sets = this.all("StatefulSet").filter((s) => containersOf(podSpecOf(s)).some((c) => c.name === "lm-worker"));
    if (sets.length === 0) {
      this.fail("overlay", "no StatefulSet with an lm-worker container");
      return null;
    }
    return sets.map((ss) => {
      const pod = podSpecOf(ss);
      const c = pod.containers.find((x) => x.name === "lm-worker");
      const args = parseArgs(c.args);
      this.checkHeadless(ss, c, args);
      this.checkGpu(ss, c);
      const token = (c.env || []).find((e) => e.name === "LMTRAIN_WORKER_TOKEN");
      if (!token || !token.valueFrom || !token.valueFrom.secretKeyRef) this.fail(ss, "LMTRAIN_WORKER_TOKEN does not come from a Secret");
      if (!args.get("server")) this.fail(ss, "lm-worker has no --server");
      return { obj: ss, pod, c, args, token };
    });
  }

  checkHeadless(ss, c, args) {
    const name = ss.spec.serviceName;
    const svc = name && this.find("Service", name);
    if (!svc) {
      this.fail(ss, `serviceName '${name}' names no Service`);
      return;
    }
    if (svc.spec.clusterIP !== "None") this.fail(svc, "must be headless (clusterIP: None) for the StatefulSet's pod DNS names");
    if (!selects(svc.spec.selector, ss.spec.template.metadata.labels)) this.fail(svc, `does not select the pods of StatefulSet ${ss.metadata.name}`);
    const advertise = args.get("advertise-address") || "";
    const podName = (c.env || []).find((e) => e.name === "POD_NAME");
    if (!advertise.startsWith(`$(POD_NAME).${name}`)) {
      this.fail(ss, `--advertise-address must be $(POD_NAME).${name}[...] so peers resolve it through the headless Service (got '${advertise}')`);
    } else if (!podName || !podName.valueFrom || !podName.valueFrom.fieldRef || podName.valueFrom.fieldRef.fieldPath !== "metadata.name") {
      this.fail(ss, "POD_NAME must come from fieldRef metadata.name");
    }
    if (!args.get("rendezvous-ports")) this.fail(ss, "lm-worker has no --rendezvous-ports");
  }

  checkGpu(ss, c) {
    const req = (c.resources && c.resources.requests) || {};
    const lim = (c.resources && c.resources.limits) || {};
    const gpu = (x) => Number(x["nvidia.com/gpu"] || 0);
    if (this.overlay === "gpu") {
      if (!(gpu(lim) >= 1)) this.fail(ss, `container ${c.name} has no nvidia.com/gpu limit`);
      if (!(gpu(req) >= 1)) this.fail(ss, `container ${c.name} requests no nvidia.com/gpu`);
      if (!/cuda/i.test(c.image || "")) this.fail(ss, `container ${c.name} image ${c.image} is not a CUDA image`);
      const tolerations = ss.spec.template.spec.tolerations || [];
      if (!tolerations.some((t) => t.key === "nvidia.com/gpu")) this.fail(ss, "no toleration for nvidia.com/gpu nodes");
    } else if (gpu(lim) > 0 || gpu(req) > 0) {
      this.fail(ss, `overlay ${this.overlay} is not the gpu overlay but requests nvidia.com/gpu`);
    }
  }

  // One ReadWriteMany claim at the same path in server and workers, holding --artifacts.
  checkSharedVolume(server, workers) {
    const artifacts = server.args.get("artifacts");
    if (!artifacts) {
      this.fail(server.obj, "lm-server has no --artifacts on the shared volume");
      return;
    }
    const mount = mountHolding(server.c, artifacts);
    const volume = mount && (server.pod.volumes || []).find((v) => v.name === mount.name);
    const claimName = volume && volume.persistentVolumeClaim && volume.persistentVolumeClaim.claimName;
    const claim = claimName && this.find("PersistentVolumeClaim", claimName);
    if (!claim) {
      this.fail(server.obj, `--artifacts ${artifacts} is not on a PersistentVolumeClaim`);
      return;
    }
    if (!(claim.spec.accessModes || []).includes("ReadWriteMany")) this.fail(claim, "holds the artifacts that workers write: accessModes must include ReadWriteMany");
    // Data roots are paths the server checks and the workers read: they must be shared too.
    for (const root of (server.args.get("data-roots") || "").split(",").filter(Boolean)) {
      const m = mountHolding(server.c, root);
      if (!m || m.mountPath !== mount.mountPath) this.fail(server.obj, `--data-roots ${root} is not on the shared volume at ${mount.mountPath} (workers read job data there)`);
    }
    for (const w of workers) {
      const m = (w.c.volumeMounts || []).find((vm) => vm.mountPath === mount.mountPath);
      const v = m && (w.pod.volumes || []).find((x) => x.name === m.name);
      if (!v || !v.persistentVolumeClaim || v.persistentVolumeClaim.claimName !== claimName) {
        this.fail(w.obj, `does not mount PersistentVolumeClaim ${claimName} at ${mount.mountPath} (job outputs are written at the server's --artifacts path)`);
      }
    }
  }

  // The worker token (from its Secret) must be a worker entry of the server's tokens file.
  checkTokens(server, workers) {
    const file = server.args.get("auth-tokens");
    if (!file) {
      this.fail(server.obj, "lm-server has no --auth-tokens");
      return;
    }
    const mount = mountHolding(server.c, file);
    const volume = mount && (server.pod.volumes || []).find((v) => v.name === mount.name);
    if (!volume || !volume.secret) {
      this.fail(server.obj, `--auth-tokens ${file} is not in a mounted Secret`);
      return;
    }
    const secret = this.find("Secret", volume.secret.secretName);
    if (!secret) return; // reported by checkVolumeRef
    const rel = file.slice(mount.mountPath.replace(/\/+$/, "").length + 1);
    const item = (volume.secret.items || []).find((i) => i.path === rel);
    const key = volume.secret.items ? item && item.key : rel;
    const text = key && decodeSecret(secret, key);
    if (text === null || text === undefined || text === "") {
      this.fail(server.obj, `--auth-tokens ${file}: the mounted Secret ${secret.metadata.name} provides no such file`);
      return;
    }
    let entries;
    try {
      entries = YAML.parse(text);
    } catch (e) {
      this.fail(secret, `tokens file is not YAML: ${e.message}`);
      return;
    }
    if (!Array.isArray(entries)) {
      this.fail(secret, "tokens file must be a YAML list of {user, role, token | token_sha256}");
      return;
    }
    const workerHashes = new Set(entries.filter((e) => e && e.role === "worker").map((e) => (e.token_sha256 ? String(e.token_sha256).toLowerCase() : crypto.createHash("sha256").update(String(e.token)).digest("hex"))));
    for (const w of workers) {
      if (!w.token || !w.token.valueFrom || !w.token.valueFrom.secretKeyRef) continue;
      const ref = w.token.valueFrom.secretKeyRef;
      const s = this.find("Secret", ref.name);
      const token = s && decodeSecret(s, ref.key);
      if (!token) continue; // reported by checkEnvRef
      const hash = crypto.createHash("sha256").update(token).digest("hex");
      if (!workerHashes.has(hash)) this.fail(w.obj, "LMTRAIN_WORKER_TOKEN is not a worker token in lm-server's --auth-tokens file");
    }
  }
}

function semanticErrors(overlay, objects) {
  return new Checker(overlay, objects).run();
}

// Every "--flag" a manifest passes to lm-server or lm-worker: [{program, flag, where}].
function programFlags(objects) {
  const out = [];
  for (const obj of objects) {
    for (const c of containersOf(podSpecOf(obj) || {})) {
      const program = c.command && c.command.length ? String(c.command[0]).split("/").pop() : c.name;
      if (program !== "lm-server" && program !== "lm-worker") continue;
      for (const flag of parseArgs(c.args).keys()) out.push({ program, flag, where: `${objectName(obj)} container ${c.name}` });
    }
  }
  return out;
}

module.exports = { semanticErrors, programFlags, parseArgs };
