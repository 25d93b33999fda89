#!/usr/bin/env python3
"""Proves the deploy validator fails when deploy/ is broken (ctest: deploy.validator_self_test):
each case breaks one thing in the rendered overlays or in a Dockerfile and expects the named
failure; one case breaks a manifest file on disk and runs validate_deploy.py on it.

  .venv/bin/python3 tests/deploy/validate_deploy_test.py -v     (or: python3 -m pytest FILE)

Exit 0: all passed; 1: a case failed, or the Python packages are missing; 77: kubectl is not
installed, so the overlay cases were skipped and the others passed.
"""
import base64
import copy
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True  # keep __pycache__ out of the source tree

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
SKIP = 77
sys.path.insert(0, HERE)
try:
    from deploy_checks import schema, yaml12
    from deploy_checks.dockerfile import dockerfile_errors
    from deploy_checks.flags import flags_from_help, flags_from_sources
    from deploy_checks.schema import schema_errors
    from deploy_checks.semantics import semantic_errors
    schema.check_installed()
except (ImportError, RuntimeError) as e:
    print(f"deploy: {e}\ndeploy: tests/deploy needs PyYAML and kubernetes-validate==1.37.0 in the "
          f"project's .venv: run scripts/setup.sh --tests (interpreter: {sys.executable})", file=sys.stderr)
    sys.exit(1)

KUBECTL = os.environ.get("KUBECTL") or "kubectl"


def _have_kubectl():
    try:
        return subprocess.run([KUBECTL, "version", "--client"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, timeout=30).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


HAVE_KUBECTL = _have_kubectl()
needs_kubectl = unittest.skipUnless(HAVE_KUBECTL, "kubectl is not installed")

_rendered = {}


def objects(overlay):
    """A fresh copy of what `kubectl kustomize deploy/k8s/overlays/OVERLAY` renders."""
    if overlay not in _rendered:
        out = subprocess.run([KUBECTL, "kustomize", os.path.join(REPO, "deploy", "k8s", "overlays", overlay)],
                             check=True, capture_output=True, text=True).stdout
        _rendered[overlay] = yaml12.load_all(out)
    return copy.deepcopy(_rendered[overlay])


def kind(objs, k, name=None):
    return next(o for o in objs if o["kind"] == k and (not name or o["metadata"]["name"].startswith(name)))


def server(o):
    return kind(o, "Deployment", "lm-server")


def server_container(o):
    return server(o)["spec"]["template"]["spec"]["containers"][0]


def workers(o):
    return kind(o, "StatefulSet", "lm-worker")


def worker_container(o):
    return workers(o)["spec"]["template"]["spec"]["containers"][0]


def all_errors(overlay, objs):
    return [e for o in objs for e in schema_errors(o)] + semantic_errors(overlay, objs)


def _sub_args(c, pattern, replacement):
    c["args"] = [re.sub(pattern, replacement, a) for a in c["args"]]


def _misspell_readiness(o):
    c = server_container(o)
    c["readinesProbe"] = c.pop("readinessProbe")


def _drop_shared_mount(o):
    c = worker_container(o)
    c["volumeMounts"] = [m for m in c["volumeMounts"] if m["mountPath"] != "/shared"]


def _set(target, key, value):
    target[key] = value


# (overlay, what is broken, how, the error expected)
CASES = [
    ("cpu", "a schema type error", lambda o: _set(server(o)["spec"], "replicas", "1"),
     r"spec/replicas must be integer"),
    ("cpu", "a misspelt field", _misspell_readiness, r"unknown field .*readinesProbe"),
    ("cpu", "a missing required field", lambda o: workers(o)["spec"].pop("selector"),
     r"must have required property 'selector'|required property selector"),
    ("cpu", "no readiness probe", lambda o: server_container(o).pop("readinessProbe"), r"no HTTP readinessProbe"),
    ("cpu", "liveness on the wrong path", lambda o: _set(server_container(o)["livenessProbe"]["httpGet"], "path", "/"),
     r"livenessProbe path is /, want /healthz"),
    ("cpu", "a probe on an undeclared port",
     lambda o: _set(server_container(o)["readinessProbe"]["httpGet"], "port", "web"),
     r"readinessProbe port web is not a port"),
    ("cpu", "two server replicas", lambda o: _set(server(o)["spec"], "replicas", 2), r"replicas must be 1"),
    ("cpu", "a rolling server update", lambda o: _set(server(o)["spec"], "strategy", {"type": "RollingUpdate"}),
     r"strategy must be Recreate"),
    ("cpu", "the dashboard on loopback",
     lambda o: _sub_args(server_container(o), r"^--http-listen=.*", "--http-listen=127.0.0.1:8080"),
     r"--http-listen=127\.0\.0\.1:8080 is not reachable"),
    ("cpu", "no data PVC", lambda o: o.remove(kind(o, "PersistentVolumeClaim", "lmtrain-data")),
     r"names missing PersistentVolumeClaim lmtrain-data"),
    ("cpu", "a ReadWriteOnce shared volume",
     lambda o: _set(kind(o, "PersistentVolumeClaim", "lmtrain-shared")["spec"], "accessModes", ["ReadWriteOnce"]),
     r"accessModes must include ReadWriteMany"),
    ("cpu", "workers without the shared volume", _drop_shared_mount,
     r"does not mount PersistentVolumeClaim lmtrain-shared at /shared"),
    ("cpu", "a data root only the server sees",
     lambda o: _sub_args(server_container(o), r"^--data-roots=.*", "--data-roots=/var/lib/lmtrain/datasets"),
     r"--data-roots /var/lib/lmtrain/datasets is not on the shared volume"),
    ("cpu", "a StatefulSet without its headless Service", lambda o: _set(workers(o)["spec"], "serviceName", "nope"),
     r"serviceName 'nope' names no Service"),
    ("cpu", "a worker Service that is not headless", lambda o: kind(o, "Service", "lm-worker")["spec"].pop("clusterIP"),
     r"must be headless"),
    ("cpu", "workers advertising their bare pod name",
     lambda o: _sub_args(worker_container(o), r"^--advertise-address=.*", "--advertise-address=$(POD_NAME)"),
     r"--advertise-address must be \$\(POD_NAME\)\.lm-worker"),
    ("cpu", "a missing Secret", lambda o: o.remove(kind(o, "Secret")), r"names missing Secret lmtrain-tokens"),
    ("cpu", "a worker token the server does not know",
     lambda o: _set(kind(o, "Secret")["data"], "worker-token", base64.b64encode(b"other").decode()),
     r"not a worker token"),
    ("cpu", "no memory limit", lambda o: worker_container(o)["resources"]["limits"].pop("memory"),
     r"container lm-worker has no memory limits"),
    ("cpu", "a root container",
     lambda o: _set(server(o)["spec"]["template"]["spec"]["securityContext"], "runAsNonRoot", False),
     r"does not set runAsNonRoot: true"),
    ("cpu", "an object outside the namespace",
     lambda o: _set(kind(o, "Service", "lm-server")["metadata"], "namespace", "default"),
     r"Service/lm-server: not in namespace lmtrain"),
    ("cpu", "a GPU request in the CPU overlay",
     lambda o: _set(worker_container(o)["resources"]["limits"], "nvidia.com/gpu", 1),
     r"not the gpu overlay but requests nvidia\.com/gpu"),
    ("postgres", "one replica on PostgreSQL", lambda o: _set(server(o)["spec"], "replicas", 1),
     r"replicas on PostgreSQL must be 2 or more"),
    ("postgres", "the database URL inline",
     lambda o: _set(server_container(o)["env"][0], "value", "postgres://u:secret@db/lmtrain") or
     server_container(o)["env"][0].pop("valueFrom"),
     r"PostgreSQL URL must come from a Secret"),
    ("postgres", "replicas advertising the Service",
     lambda o: _sub_args(server_container(o), r"^--advertise-address=.*", "--advertise-address=lm-server:50051"),
     r"--advertise-address must be the pod's IP"),
    ("gpu", "no GPU limit", lambda o: worker_container(o)["resources"]["limits"].pop("nvidia.com/gpu"),
     r"no nvidia\.com/gpu limit"),
    ("gpu", "no GPU request", lambda o: worker_container(o)["resources"]["requests"].pop("nvidia.com/gpu"),
     r"requests no nvidia\.com/gpu"),
    ("gpu", "the CPU image", lambda o: _set(worker_container(o), "image", "lmtrain/lm-worker:latest"),
     r"is not a CUDA image"),
    ("gpu", "no GPU toleration", lambda o: workers(o)["spec"]["template"]["spec"].pop("tolerations"),
     r"no toleration for nvidia\.com/gpu"),
    ("gpu", "declared GPUs", lambda o: worker_container(o)["args"].append("--gpus=0,1"),
     r"let it discover the pod's GPUs"),
    ("gpu", "fewer slots than GPUs",
     lambda o: _sub_args(worker_container(o), r"^--slots=.*", "--slots=1"),
     r"--slots=1 is fewer than the pod's 2 GPUs"),
]


def _test_name(text):
    return "test_" + re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


class OverlayTest(unittest.TestCase):
    @needs_kubectl
    def test_the_committed_overlays_pass(self):
        for overlay in ("cpu", "gpu", "postgres"):
            self.assertEqual(all_errors(overlay, objects(overlay)), [], overlay)

    def expect_failure(self, overlay, break_it, pattern):
        objs = objects(overlay)
        break_it(objs)
        errors = all_errors(overlay, objs)
        self.assertTrue(any(re.search(pattern, e) for e in errors),
                        f"expected an error matching /{pattern}/, got:\n" + ("\n".join(errors) or "(none)"))

    @needs_kubectl
    def test_a_broken_manifest_file_fails_validate_deploy_py(self):
        tmp = tempfile.mkdtemp(prefix="lmtrain-deploy-")
        self.addCleanup(shutil.rmtree, tmp, ignore_errors=True)
        shutil.copytree(os.path.join(REPO, "deploy"), os.path.join(tmp, "deploy"), symlinks=True)
        for folder in ("server", "worker/agent"):
            shutil.copytree(os.path.join(REPO, folder), os.path.join(tmp, folder), symlinks=True)
        file = os.path.join(tmp, "deploy", "k8s", "base", "server-deployment.yaml")
        with open(file, encoding="utf-8") as f:
            text = f.read()
        self.assertIn("readinessProbe:", text)
        with open(file, "w", encoding="utf-8") as f:
            f.write(text.replace("readinessProbe:", "readinesProbe:", 1))
        run = subprocess.run([sys.executable, os.path.join(HERE, "validate_deploy.py"), "--repo", tmp],
                             capture_output=True, text=True, stdin=subprocess.DEVNULL)
        self.assertEqual(run.returncode, 1, run.stdout + run.stderr)
        self.assertRegex(run.stdout, r"unknown field /spec/template/spec/containers/0/readinesProbe")
        self.assertRegex(run.stdout, r"no HTTP readinessProbe")


for _overlay, _what, _break_it, _pattern in CASES:
    def _case(self, overlay=_overlay, break_it=_break_it, pattern=_pattern):
        self.expect_failure(overlay, break_it, pattern)
    _case.__doc__ = f"{_overlay} overlay fails on {_what}"
    _name = _test_name(f"{_overlay} overlay fails on {_what}")
    assert not hasattr(OverlayTest, _name), _name
    setattr(OverlayTest, _name, needs_kubectl(_case))


def docker_repo(test, dockerfile, extra=None):
    """A throwaway build context holding server/main.cc, build/, EXTRA files and x.Dockerfile."""
    tmp = tempfile.mkdtemp(prefix="lmtrain-docker-")
    test.addCleanup(shutil.rmtree, tmp, ignore_errors=True)
    os.mkdir(os.path.join(tmp, "server"))
    open(os.path.join(tmp, "server", "main.cc"), "w").close()
    os.mkdir(os.path.join(tmp, "build"))
    for name, text in (extra or {}).items():
        with open(os.path.join(tmp, name), "w") as f:
            f.write(text)
    file = os.path.join(tmp, "x.Dockerfile")
    with open(file, "w") as f:
        f.write(dockerfile)
    return tmp, file


GOOD = """FROM debian:12 AS build
COPY server/ server/
RUN mkdir -p /out/bin && cp build/bin/lm-server build/bin/lm-train /out/bin/
FROM debian:12
COPY --from=build /out/ /opt/
USER 10001:10001
ENTRYPOINT ["lm-server"]
CMD ["--listen", "0.0.0.0:50051", "--data-dir=/d"]
"""

# (what is wrong, the Dockerfile, the error expected, extra files of the build context)
DOCKER_CASES = [
    ("a COPY source that does not exist", GOOD.replace("COPY server/ server/", "COPY servr/ \\\n  server/"),
     r":2: COPY source servr/ does not exist", None),
    ("a COPY source outside the context", GOOD.replace("COPY server/ server/", "COPY ../x server/"),
     r"outside the build context", None),
    ("a COPY source .dockerignore excludes", GOOD.replace("COPY server/ server/", "COPY build/ build/"),
     r"excluded by \.dockerignore", {".dockerignore": "build*/\n"}),
    ("--from naming no stage", GOOD.replace("--from=build", "--from=builder"),
     r"--from=builder names no earlier stage", None),
    ("no USER", GOOD.replace("USER 10001:10001\n", ""), r"sets no USER", None),
    ("USER root", GOOD.replace("USER 10001:10001", "USER root"), r"runs as root", None),
    ("a shell-form CMD", re.sub(r"CMD .*", "CMD lm-server --listen x", GOOD), r"CMD must be a JSON array", None),
    ("no lm-train next to lm-server", GOOD.replace(" build/bin/lm-train", ""),
     r":3: lm-train must be copied next to lm-server", None),
    ("lm-train copied elsewhere",
     GOOD.replace(" build/bin/lm-train /out/bin/", " /out/bin/ && cp build/bin/lm-train /out/lib/"),
     r":3: lm-train must be copied next to lm-server", None),
]


class DockerfileTest(unittest.TestCase):
    def test_a_good_dockerfile_passes_and_its_flags_are_found(self):
        tmp, file = docker_repo(self, GOOD)
        errors, program, flags = dockerfile_errors(file, tmp)
        self.assertEqual(errors, [])
        self.assertEqual(program, "lm-server")
        self.assertEqual(flags, ["listen", "data-dir"])


for _what, _text, _pattern, _extra in DOCKER_CASES:
    def _docker_case(self, text=_text, pattern=_pattern, extra=_extra):
        tmp, file = docker_repo(self, text, extra)
        errors = dockerfile_errors(file, tmp)[0]
        self.assertTrue(any(re.search(pattern, e) for e in errors),
                        f"expected /{pattern}/, got:\n" + ("\n".join(errors) or "(none)"))
    _docker_case.__doc__ = f"a Dockerfile with {_what} fails"
    _name = _test_name(f"a Dockerfile with {_what} fails")
    assert not hasattr(DockerfileTest, _name), _name
    setattr(DockerfileTest, _name, _docker_case)


class FlagsTest(unittest.TestCase):
    def test_flags_come_from_help_output_and_from_sources(self):
        tmp = tempfile.mkdtemp(prefix="lmtrain-flags-")
        self.addCleanup(shutil.rmtree, tmp, ignore_errors=True)
        binary = os.path.join(tmp, "lm-fake")
        with open(binary, "w") as f:
            f.write("#!/bin/sh\necho 'usage: lm-fake [flags]' >&2\n"
                    "echo '  --listen               gRPC address (default: x)' >&2\n"
                    "echo '  --data-dir             folder' >&2\n")
        os.chmod(binary, 0o755)
        self.assertEqual(sorted(flags_from_help(binary)), ["data-dir", "listen"])
        os.mkdir(os.path.join(tmp, "server"))
        with open(os.path.join(tmp, "server", "main.cc"), "w") as f:
            f.write('cl.AddString("listen", &a, "x");\ncl.AddInt( "local-worker", &b, "y");\n')
        self.assertEqual(sorted(flags_from_sources("lm-server", tmp)), ["listen", "local-worker"])


def main():
    verbosity = 2 if "-v" in sys.argv[1:] else 1
    suite = unittest.defaultTestLoader.loadTestsFromModule(sys.modules[__name__])
    result = unittest.TextTestRunner(verbosity=verbosity, stream=sys.stdout).run(suite)
    if not result.wasSuccessful():
        return 1
    if not HAVE_KUBECTL:
        print(f"SKIP: kubectl is not installed ('{KUBECTL}'), so the {len(result.skipped)} overlay cases "
              "were skipped; the Dockerfile and flag cases passed")
        return SKIP
    return 0


if __name__ == "__main__":
    sys.exit(main())
