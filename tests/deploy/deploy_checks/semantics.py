"""What lmtrain's Kubernetes manifests must say, beyond being schema-valid: checked on the
objects one overlay renders to (`kubectl kustomize deploy/k8s/overlays/NAME`).

  semantic_errors("gpu", objects) -> ["StatefulSet/lm-worker: container lm-worker requests no nvidia.com/gpu", ...]

The rules (deploy/README.md describes the layout they protect):
 - one Namespace, and every other object in it;
 - lm-server: a Deployment with 1 replica and the Recreate strategy (one SQLite writer), a
   PVC-backed --data-dir, HTTP /readyz readiness and /healthz liveness probes on a declared
   port, gRPC and HTTP listening on all interfaces, a Service exposing both ports; on
   PostgreSQL (env LMTRAIN_STORE, the "postgres" overlay) instead 2 or more replicas, the URL
   from a Secret and --advertise-address the pod's IP;
 - lm-worker: a StatefulSet whose serviceName is a headless Service (clusterIP: None) that
   selects its pods; workers advertise $(POD_NAME).<that service>; the worker token comes
   from a Secret;
 - one ReadWriteMany PVC mounted by the server and every worker at the same path, holding
   the server's --artifacts folder (job outputs are written by workers, read by all ranks)
   and its --data-roots, if any (the server checks job paths there, workers read them);
 - every container has cpu and memory requests and limits, runs as non-root without
   privilege escalation; every Secret, ConfigMap and PVC a pod names exists (with the key);
 - the worker token's SHA-256 is a worker entry of the server's tokens file;
 - the "gpu" overlay's workers request and limit nvidia.com/gpu, run a CUDA image, discover their
   GPUs (no --gpus) and have a slot per GPU; other overlays request no GPU.
"""
import base64
import binascii
import hashlib
import re

import yaml

from . import yaml12
from .schema import object_name
from .values import dicts, get, number, same, text, truthy

CLUSTER_SCOPED = {"Namespace", "PersistentVolume", "StorageClass", "ClusterRole", "ClusterRoleBinding"}
WORKLOADS = {"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job"}


def parse_args(args):
    """"--name=value" / "--name value" container args as a dict name -> value (in order)."""
    flags = {}
    items = ["null" if a is None else text(a) for a in args] if isinstance(args, list) else []
    i = 0
    while i < len(items):
        a = items[i]
        if a.startswith("--"):
            if "=" in a:
                flags[a[2:a.index("=")]] = a[a.index("=") + 1:]
            elif i + 1 < len(items) and not items[i + 1].startswith("--"):
                flags[a[2:]] = items[i + 1]
                i += 1
            else:
                flags[a[2:]] = ""
        i += 1
    return flags


def pod_spec_of(obj):
    kind = get(obj, "kind")
    if kind in WORKLOADS:
        return get(obj, "spec", "template", "spec")
    if kind == "Pod":
        return get(obj, "spec")
    return None


def containers_of(pod):
    return dicts(get(pod, "initContainers")) + dicts(get(pod, "containers"))


def selects(selector, labels):
    if not isinstance(selector, dict) or not selector:
        return False
    return all(isinstance(labels, dict) and k in labels and same(labels[k], v) for k, v in selector.items())


def _named(items, name):
    return next((x for x in dicts(items) if same(x.get("name"), name)), None)


def volume_at(pod, c, mount_path):
    """The volume backing mount_path in container c of pod spec pod, or None."""
    m = next((vm for vm in dicts(c.get("volumeMounts")) if same(vm.get("mountPath"), mount_path)), None)
    return _named(get(pod, "volumes"), m.get("name")) if m is not None else None


def mount_holding(c, file):
    """The mount of c whose path contains file (the longest), or None."""
    best = None
    for m in dicts(c.get("volumeMounts")):
        p = re.sub(r"/+$", "", text(m.get("mountPath")))
        if (file == p or file.startswith(p + "/")) and (best is None or len(p) > len(text(best.get("mountPath")))):
            best = m
    return best


def decode_secret(secret, key):
    string_data = secret.get("stringData")
    if isinstance(string_data, dict) and key in string_data:
        return text(string_data[key])
    data = secret.get("data")
    if isinstance(data, dict) and key in data:
        raw = re.sub(r"\s", "", text(data[key]))
        raw = re.sub(r"[^A-Za-z0-9+/=_-]", "", raw).replace("-", "+").replace("_", "/").split("=")[0]
        try:
            decoded = base64.b64decode(raw + "=" * (-len(raw) % 4))
        except (binascii.Error, ValueError):
            decoded = base64.b64decode(raw[:len(raw) - len(raw) % 4])
        return decoded.decode("utf-8", errors="replace")
    return None


def _sha256(s):
    return hashlib.sha256(s.encode("utf-8", errors="surrogatepass")).hexdigest()


class Checker:
    def __init__(self, overlay, objects):
        self.overlay = overlay
        self.objects = objects
        self.errors = []

    def fail(self, obj, message):
        self.errors.append(f"{obj if isinstance(obj, str) else object_name(obj)}: {message}")

    def all(self, kind):
        return [o for o in self.objects if isinstance(o, dict) and same(o.get("kind"), kind)]

    def find(self, kind, name):
        return next((o for o in self.all(kind) if isinstance(o.get("metadata"), dict)
                     and same(o["metadata"].get("name"), name)), None)

    def run(self):
        self.check_namespace()
        for obj in self.objects:
            pod = pod_spec_of(obj)
            if truthy(pod):
                self.check_pod(obj, pod)
        server = self.check_server()
        workers = self.check_workers()
        if server and workers:
            self.check_shared_volume(server, workers)
        if server and workers:
            self.check_tokens(server, workers)
        return self.errors

    def check_namespace(self):
        namespaces = self.all("Namespace")
        if len(namespaces) != 1:
            self.fail("overlay", f"expected one Namespace object, found {len(namespaces)}")
            return
        ns = get(namespaces[0], "metadata", "name")
        for o in self.objects:
            if get(o, "kind") in CLUSTER_SCOPED:
                continue
            if not truthy(get(o, "metadata")) or not same(get(o, "metadata", "namespace"), ns):
                self.fail(o, f"not in namespace {text(ns)}")

    def check_pod(self, obj, pod):
        """Resources, security context and references of every pod template."""
        psc = get(pod, "securityContext") if truthy(get(pod, "securityContext")) else {}
        for c in containers_of(pod):
            where = f"container {text(c.get('name'))}"
            for kind in ("requests", "limits"):
                for r in ("cpu", "memory"):
                    res = c.get("resources")
                    if not truthy(res) or not truthy(get(res, kind)) or not isinstance(res[kind], dict) or r not in res[kind]:
                        self.fail(obj, f"{where} has no {r} {kind}")
            csc = c.get("securityContext") if isinstance(c.get("securityContext"), dict) else {}
            non_root = csc["runAsNonRoot"] if "runAsNonRoot" in csc else get(psc, "runAsNonRoot")
            uid = csc["runAsUser"] if "runAsUser" in csc else get(psc, "runAsUser")
            if non_root is not True:
                self.fail(obj, f"{where} does not set runAsNonRoot: true")
            if same(uid, 0):
                self.fail(obj, f"{where} runs as uid 0")
            if csc.get("allowPrivilegeEscalation") is not False:
                self.fail(obj, f"{where} does not set allowPrivilegeEscalation: false")
            if csc.get("privileged") is True:
                self.fail(obj, f"{where} is privileged")
            for m in dicts(c.get("volumeMounts")):
                if _named(get(pod, "volumes"), m.get("name")) is None:
                    self.fail(obj, f"{where} mounts undefined volume {text(m.get('name'))}")
            for e in dicts(c.get("env")):
                self.check_env_ref(obj, where, e)
            for e in dicts(c.get("envFrom")):
                if truthy(e.get("secretRef")) and not self.find("Secret", get(e, "secretRef", "name")):
                    self.fail(obj, f"{where} envFrom names missing Secret {text(get(e, 'secretRef', 'name'))}")
                if truthy(e.get("configMapRef")) and not self.find("ConfigMap", get(e, "configMapRef", "name")):
                    self.fail(obj, f"{where} envFrom names missing ConfigMap {text(get(e, 'configMapRef', 'name'))}")
        for v in dicts(get(pod, "volumes")):
            self.check_volume_ref(obj, v)

    def check_env_ref(self, obj, where, e):
        source = e.get("valueFrom") if truthy(e.get("valueFrom")) else {}
        for ref, kind in (("secretKeyRef", "Secret"), ("configMapKeyRef", "ConfigMap")):
            r = get(source, ref)
            if not truthy(r):
                continue
            name, key = get(r, "name"), get(r, "key")
            target = self.find(kind, name)
            if target is None:
                self.fail(obj, f"{where} env {text(e.get('name'))} names missing {kind} {text(name)}")
            elif not (_has_key(target.get("data"), key) or _has_key(target.get("stringData"), key)):
                self.fail(obj, f"{where} env {text(e.get('name'))}: {kind} {text(name)} has no key {text(key)}")

    def check_volume_ref(self, obj, v):
        refs = (
            (get(v, "secret", "secretName"), "Secret", v.get("secret")),
            (get(v, "configMap", "name"), "ConfigMap", v.get("configMap")),
            (get(v, "persistentVolumeClaim", "claimName"), "PersistentVolumeClaim", None),
        )
        for name, kind, src in refs:
            if not truthy(name):
                continue
            target = self.find(kind, name)
            if target is None:
                self.fail(obj, f"volume {text(v.get('name'))} names missing {kind} {text(name)}")
                continue
            for item in dicts(get(src, "items")):
                if not _has_key(target.get("data"), item.get("key")):
                    self.fail(obj, f"volume {text(v.get('name'))}: {kind} {text(name)} has no key {text(item.get('key'))}")

    def check_server(self):
        """The lm-server Deployment and its Service; returns a dict obj, pod, c, args or None."""
        server = next((d for d in self.all("Deployment")
                       if any(same(c.get("name"), "lm-server") for c in containers_of(pod_spec_of(d)))), None)
        if server is None:
            self.fail("overlay", "no Deployment with an lm-server container")
            return None
        pod = pod_spec_of(server)
        c = _named(get(pod, "containers"), "lm-server")
        if c is None:
            self.fail(server, "lm-server runs only as an init container")
            return None
        args = parse_args(c.get("args"))
        if self.replicated(c, args):
            self.check_replicas(server, pod, c, args)
        else:
            self.check_single_server(server, pod, c, args)
        for flag, port in (("listen", 50051), ("http-listen", 8080)):
            v = args.get(flag)
            if v is None:
                self.fail(server, f"lm-server has no --{flag}")
            elif not v.startswith("0.0.0.0:") and not v.startswith("[::]:"):
                self.fail(server, f"--{flag}={v} is not reachable from outside the pod (use 0.0.0.0:{port})")
        self.check_probe(server, c, "readinessProbe", "/readyz")
        self.check_probe(server, c, "livenessProbe", "/healthz")
        self.check_server_service(server, c)
        return {"obj": server, "pod": pod, "c": c, "args": args}

    @staticmethod
    def replicated(c, args):
        """Whether lm-server runs on PostgreSQL (LMTRAIN_STORE or --store): replicas then."""
        return "store" in args or _named(c.get("env"), "LMTRAIN_STORE") is not None

    def check_single_server(self, server, pod, c, args):
        spec = server["spec"]
        if not same(spec.get("replicas"), 1):
            self.fail(server, f"replicas must be 1 (SQLite has one writer), got {text(spec.get('replicas'))}")
        if not truthy(spec.get("strategy")) or not same(get(spec, "strategy", "type"), "Recreate"):
            self.fail(server, "strategy must be Recreate (no two lm-servers on one database)")
        data_dir = args.get("data-dir")
        data_volume = volume_at(pod, c, data_dir) if data_dir else None
        if not data_dir:
            self.fail(server, "lm-server has no --data-dir")
        elif data_volume is None or not truthy(data_volume.get("persistentVolumeClaim")):
            self.fail(server, f"--data-dir {data_dir} is not a mounted PersistentVolumeClaim")

    def check_replicas(self, server, pod, c, args):
        """lm-server replicas on PostgreSQL: two or more, the URL (a password) from a Secret,
        each advertising its own pod IP for the standby's redirects."""
        replicas = get(server, "spec", "replicas")
        if not isinstance(replicas, int) or replicas < 2:
            self.fail(server, f"replicas on PostgreSQL must be 2 or more (one stands by), got {text(replicas)}")
        store = _named(c.get("env"), "LMTRAIN_STORE")
        if "store" in args or store is None or not truthy(get(store, "valueFrom", "secretKeyRef")):
            self.fail(server, "the PostgreSQL URL must come from a Secret (env LMTRAIN_STORE valueFrom "
                              "secretKeyRef), not --store")
        advertise = args.get("advertise-address") or ""
        pod_ip = next((e for e in dicts(c.get("env"))
                       if same(get(e, "valueFrom", "fieldRef", "fieldPath"), "status.podIP")), None)
        if pod_ip is None or f"$({text(pod_ip.get('name'))})" not in advertise:
            self.fail(server, "--advertise-address must be the pod's IP ($(POD_IP):50051 with env POD_IP "
                              "from status.podIP): a standby sends clients there")
        if not args.get("data-dir"):
            self.fail(server, "lm-server has no --data-dir")

    def check_probe(self, obj, c, probe, path):
        p = c.get(probe)
        if not truthy(p) or not truthy(get(p, "httpGet")):
            self.fail(obj, f"container {text(c.get('name'))} has no HTTP {probe}")
            return
        if not same(get(p, "httpGet", "path"), path):
            self.fail(obj, f"{probe} path is {text(get(p, 'httpGet', 'path'))}, want {path}")
        port = get(p, "httpGet", "port")
        if not _declares(c, port):
            self.fail(obj, f"{probe} port {text(port)} is not a port of container {text(c.get('name'))}")

    def check_server_service(self, server, c):
        labels = get(server, "spec", "template", "metadata", "labels")
        svc = next((s for s in self.all("Service") if truthy(s.get("spec"))
                    and not same(get(s, "spec", "clusterIP"), "None")
                    and selects(get(s, "spec", "selector"), labels)), None)
        if svc is None:
            self.fail(server, "no (non-headless) Service selects the lm-server pods")
            return
        for want in (50051, 8080):
            port = next((p for p in dicts(get(svc, "spec", "ports")) if same(p.get("port"), want)), None)
            if port is None:
                self.fail(svc, f"exposes no port {want}")
                continue
            target = port["targetPort"] if "targetPort" in port else port.get("port")
            if not _declares(c, target):
                self.fail(svc, f"port {want} targets {text(target)}, which container lm-server does not declare")

    def check_workers(self):
        """The lm-worker StatefulSet(s) and their headless Service; returns a list of dicts."""
        sets = [s for s in self.all("StatefulSet")
                if any(same(c.get("name"), "lm-worker") for c in containers_of(pod_spec_of(s)))]
        if not sets:
            self.fail("overlay", "no StatefulSet with an lm-worker container")
            return None
        out = []
        for ss in sets:
            pod = pod_spec_of(ss)
            c = _named(get(pod, "containers"), "lm-worker")
            if c is None:
                self.fail(ss, "lm-worker runs only as an init container")
                continue
            args = parse_args(c.get("args"))
            self.check_headless(ss, c, args)
            self.check_gpu(ss, c, args)
            token = _named(c.get("env"), "LMTRAIN_WORKER_TOKEN")
            if token is None or not truthy(get(token, "valueFrom", "secretKeyRef")):
                self.fail(ss, "LMTRAIN_WORKER_TOKEN does not come from a Secret")
            if not args.get("server"):
                self.fail(ss, "lm-worker has no --server")
            out.append({"obj": ss, "pod": pod, "c": c, "args": args, "token": token})
        return out

    def check_headless(self, ss, c, args):
        name = get(ss, "spec", "serviceName")
        svc = self.find("Service", name) if truthy(name) else None
        if svc is None:
            self.fail(ss, f"serviceName '{text(name)}' names no Service")
            return
        if not same(get(svc, "spec", "clusterIP"), "None"):
            self.fail(svc, "must be headless (clusterIP: None) for the StatefulSet's pod DNS names")
        if not selects(get(svc, "spec", "selector"), get(ss, "spec", "template", "metadata", "labels")):
            self.fail(svc, f"does not select the pods of StatefulSet {text(get(ss, 'metadata', 'name'))}")
        advertise = args.get("advertise-address") or ""
        pod_name = _named(c.get("env"), "POD_NAME")
        if not advertise.startswith(f"$(POD_NAME).{text(name)}"):
            self.fail(ss, f"--advertise-address must be $(POD_NAME).{text(name)}[...] so peers resolve it "
                          f"through the headless Service (got '{advertise}')")
        elif pod_name is None or not same(get(pod_name, "valueFrom", "fieldRef", "fieldPath"), "metadata.name"):
            self.fail(ss, "POD_NAME must come from fieldRef metadata.name")
        if not args.get("rendezvous-ports"):
            self.fail(ss, "lm-worker has no --rendezvous-ports")

    def check_gpu(self, ss, c, args):
        req = get(c, "resources", "requests") if truthy(get(c, "resources", "requests")) else {}
        lim = get(c, "resources", "limits") if truthy(get(c, "resources", "limits")) else {}

        def gpu(x):
            return number(get(x, "nvidia.com/gpu"))

        name = text(c.get("name"))
        if self.overlay == "gpu":
            if not gpu(lim) >= 1:
                self.fail(ss, f"container {name} has no nvidia.com/gpu limit")
            if not gpu(req) >= 1:
                self.fail(ss, f"container {name} requests no nvidia.com/gpu")
            image = c.get("image")
            if not re.search("cuda", text(image) if truthy(image) else "", re.IGNORECASE):
                self.fail(ss, f"container {name} image {text(image)} is not a CUDA image")
            tolerations = dicts(get(ss, "spec", "template", "spec", "tolerations"))
            if not any(same(t.get("key"), "nvidia.com/gpu") for t in tolerations):
                self.fail(ss, "no toleration for nvidia.com/gpu nodes")
            if "gpus" in args:
                self.fail(ss, f"lm-worker --gpus={args['gpus']}: let it discover the pod's GPUs (drop --gpus)")
            if not number(args.get("slots")) >= gpu(lim):
                self.fail(ss, f"lm-worker --slots={text(args.get('slots'))} is fewer than the pod's "
                              f"{gpu(lim):g} GPUs (one lm-train process per GPU)")
        elif gpu(lim) > 0 or gpu(req) > 0:
            self.fail(ss, f"overlay {self.overlay} is not the gpu overlay but requests nvidia.com/gpu")

    def check_shared_volume(self, server, workers):
        """One ReadWriteMany claim at the same path in server and workers, holding --artifacts."""
        artifacts = server["args"].get("artifacts")
        if not artifacts:
            self.fail(server["obj"], "lm-server has no --artifacts on the shared volume")
            return
        mount = mount_holding(server["c"], artifacts)
        volume = _named(get(server["pod"], "volumes"), mount.get("name")) if mount is not None else None
        claim_name = get(volume, "persistentVolumeClaim", "claimName")
        claim = self.find("PersistentVolumeClaim", claim_name) if truthy(claim_name) else None
        if claim is None:
            self.fail(server["obj"], f"--artifacts {artifacts} is not on a PersistentVolumeClaim")
            return
        modes = get(claim, "spec", "accessModes")
        if not isinstance(modes, list) or "ReadWriteMany" not in modes:
            self.fail(claim, "holds the artifacts that workers write: accessModes must include ReadWriteMany")
        mount_path = mount.get("mountPath")
        # Data roots are paths the server checks and the workers read: they must be shared too.
        for root in [r for r in (server["args"].get("data-roots") or "").split(",") if r]:
            m = mount_holding(server["c"], root)
            if m is None or not same(m.get("mountPath"), mount_path):
                self.fail(server["obj"], f"--data-roots {root} is not on the shared volume at {text(mount_path)} "
                                         "(workers read job data there)")
        for w in workers:
            m = next((vm for vm in dicts(w["c"].get("volumeMounts")) if same(vm.get("mountPath"), mount_path)), None)
            v = _named(get(w["pod"], "volumes"), m.get("name")) if m is not None else None
            if v is None or not truthy(v.get("persistentVolumeClaim")) or not same(get(v, "persistentVolumeClaim", "claimName"), claim_name):
                self.fail(w["obj"], f"does not mount PersistentVolumeClaim {text(claim_name)} at {text(mount_path)} "
                                    "(job outputs are written at the server's --artifacts path)")

    def check_tokens(self, server, workers):
        """The worker token (from its Secret) must be a worker entry of the server's tokens file."""
        file = server["args"].get("auth-tokens")
        if not file:
            self.fail(server["obj"], "lm-server has no --auth-tokens")
            return
        mount = mount_holding(server["c"], file)
        volume = _named(get(server["pod"], "volumes"), mount.get("name")) if mount is not None else None
        source = get(volume, "secret")
        if volume is None or not truthy(source):
            self.fail(server["obj"], f"--auth-tokens {file} is not in a mounted Secret")
            return
        secret = self.find("Secret", get(source, "secretName"))
        if secret is None:
            return  # reported by check_volume_ref
        rel = file[len(re.sub(r"/+$", "", text(mount.get("mountPath")))) + 1:]
        if truthy(get(source, "items")):
            item = next((i for i in dicts(get(source, "items")) if same(i.get("path"), rel)), None)
            key = item.get("key") if item is not None else None
        else:
            key = rel
        content = decode_secret(secret, key) if truthy(key) else None
        if not content:
            self.fail(server["obj"], f"--auth-tokens {file}: the mounted Secret "
                                     f"{text(get(secret, 'metadata', 'name'))} provides no such file")
            return
        try:
            entries = yaml12.load(content)
        except yaml.YAMLError as e:
            self.fail(secret, f"tokens file is not YAML: {' '.join(str(e).split())}")
            return
        if not isinstance(entries, list):
            self.fail(secret, "tokens file must be a YAML list of {user, role, token | token_sha256}")
            return
        worker_hashes = {
            text(e["token_sha256"]).lower() if truthy(e.get("token_sha256")) else _sha256(text(e.get("token")))
            for e in entries if isinstance(e, dict) and same(e.get("role"), "worker")
        }
        for w in workers:
            ref = get(w["token"], "valueFrom", "secretKeyRef")
            if not truthy(ref):
                continue
            s = self.find("Secret", get(ref, "name"))
            token = decode_secret(s, get(ref, "key")) if s is not None else None
            if not token:
                continue  # reported by check_env_ref
            if _sha256(token) not in worker_hashes:
                self.fail(w["obj"], "LMTRAIN_WORKER_TOKEN is not a worker token in lm-server's --auth-tokens file")


def _has_key(data, key):
    try:
        return isinstance(data, dict) and key in data
    except TypeError:
        return False


def _declares(c, port):
    """Whether container c declares port (a port name or number)."""
    return any(same(cp.get("name"), port) or same(cp.get("containerPort"), port) for cp in dicts(c.get("ports")))


def semantic_errors(overlay, objects):
    return Checker(overlay, objects).run()


def program_flags(objects):
    """Every "--flag" a manifest passes to lm-server or lm-worker: [(program, flag, where)]."""
    out = []
    for obj in objects:
        for c in containers_of(pod_spec_of(obj)):
            command = c.get("command")
            if isinstance(command, list) and command:
                program = text(command[0]).split("/")[-1]
            else:
                program = c.get("name")
            if program not in ("lm-server", "lm-worker"):
                continue
            for flag in parse_args(c.get("args")):
                out.append((program, flag, f"{object_name(obj)} container {text(c.get('name'))}"))
    return out
