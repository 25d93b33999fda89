#!/usr/bin/env python3
"""Validates deploy/ offline (ctest: deploy.manifests, label deploy):
  1. renders every kustomize overlay under deploy/k8s/overlays with `kubectl kustomize`;
  2. checks every rendered object against the Kubernetes OpenAPI schemas (deploy_checks/schema.py:
     kubernetes-validate's Kubernetes 1.27 schemas, strict, so unknown fields fail too);
  3. checks what lmtrain needs of them (deploy_checks/semantics.py: PVCs, probes, headless
     Service, Secrets, GPUs, resource limits, non-root);
  4. checks deploy/docker/*.Dockerfile (deploy_checks/dockerfile.py: COPY sources exist, non-root,
     lm-train copied next to lm-server / lm-worker);
  5. checks that every flag the manifests and Dockerfiles pass to lm-server / lm-worker is one
     the program accepts (its --help when built, else its sources).

  .venv/bin/python3 tests/deploy/validate_deploy.py [--repo DIR] [--server-bin PATH]
      [--worker-bin PATH] [--kubectl PATH]   (default: $KUBECTL, else kubectl)

Exit 0: all passed; 1: something failed (each failure printed with the object and field), or
the Python packages are missing; 77: kubectl is not installed, so only the Dockerfile and flag
checks ran and passed (ctest reports the test as skipped).
"""
import argparse
import os
import subprocess
import sys

sys.dont_write_bytecode = True  # keep __pycache__ out of the source tree

SKIP = 77
HERE = os.path.dirname(os.path.abspath(__file__))
SETUP_HINT = ("tests/deploy needs PyYAML and kubernetes-validate==1.37.0 in the project's .venv: "
              "run scripts/setup.sh --tests")


def require_packages():
    """Imports the checks; exits 1 with what to run when their packages are missing."""
    sys.path.insert(0, HERE)
    try:
        import yaml  # noqa: F401
        import kubernetes_validate  # noqa: F401
        from deploy_checks import schema
        schema.check_installed()
    except (ImportError, RuntimeError) as e:
        print(f"deploy: {e}\ndeploy: {SETUP_HINT} (interpreter: {sys.executable})", file=sys.stderr)
        sys.exit(1)


def parse_command_line(argv):
    parser = argparse.ArgumentParser(description="Validates deploy/ offline.", allow_abbrev=False)
    parser.add_argument("--repo", default=os.path.normpath(os.path.join(HERE, "..", "..")))
    parser.add_argument("--server-bin")
    parser.add_argument("--worker-bin")
    parser.add_argument("--kubectl", default=os.environ.get("KUBECTL") or "kubectl")
    return parser.parse_args(argv)


def have_kubectl(name):
    try:
        return subprocess.run([name, "version", "--client"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, timeout=30).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def render(kubectl, overlay_dir):
    """The objects `kubectl kustomize overlay_dir` renders (raises RuntimeError with why not)."""
    import yaml
    from deploy_checks import yaml12
    try:
        run = subprocess.run([kubectl, "kustomize", overlay_dir], capture_output=True, text=True,
                             errors="replace", timeout=120, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError) as e:
        raise RuntimeError(str(e)) from e
    if run.returncode != 0:
        raise RuntimeError(run.stderr.strip() or f"kubectl kustomize exited {run.returncode}")
    try:
        return yaml12.load_all(run.stdout)
    except yaml.YAMLError as e:
        raise RuntimeError(str(e)) from e


class Report:
    def __init__(self):
        self.passed = 0
        self.failed = 0

    def __call__(self, name, errors):
        if not errors:
            self.passed += 1
            print(f"ok    {name}")
        else:
            self.failed += 1
            print(f"FAIL  {name}")
            for e in errors:
                print(f"        {e}")


def main(argv):
    opts = parse_command_line(argv)
    can_render = have_kubectl(opts.kubectl)
    require_packages()
    from deploy_checks.dockerfile import dockerfile_errors
    from deploy_checks.flags import known_flags
    from deploy_checks.schema import KUBERNETES_VERSION, schema_errors
    from deploy_checks.semantics import program_flags, semantic_errors

    report = Report()
    used_flags = []  # (program, flag, where)
    overlays_dir = os.path.join(opts.repo, "deploy", "k8s", "overlays")
    overlays = sorted(d for d in os.listdir(overlays_dir)
                      if os.path.exists(os.path.join(overlays_dir, d, "kustomization.yaml"))) \
        if os.path.isdir(overlays_dir) else []
    report("deploy/k8s has the cpu and gpu overlays",
           [f"missing deploy/k8s/overlays/{o}/kustomization.yaml" for o in ("cpu", "gpu") if o not in overlays])

    for overlay in overlays if can_render else []:
        try:
            objects = render(opts.kubectl, os.path.join(overlays_dir, overlay))
        except RuntimeError as e:
            report(f"overlay {overlay}: kubectl kustomize renders it", [str(e).strip()])
            continue
        report(f"overlay {overlay}: kubectl kustomize renders it ({len(objects)} objects)",
               [] if objects else ["rendered nothing"])
        report(f"overlay {overlay}: every object matches the Kubernetes {KUBERNETES_VERSION} schemas",
               [e for o in objects for e in schema_errors(o)])
        report(f"overlay {overlay}: lmtrain's deployment rules", semantic_errors(overlay, objects))
        used_flags += [(p, f, f"overlay {overlay}: {where}") for p, f, where in program_flags(objects)]

    docker_dir = os.path.join(opts.repo, "deploy", "docker")
    dockerfiles = sorted(f for f in os.listdir(docker_dir) if f == "Dockerfile" or f.endswith(".Dockerfile")) \
        if os.path.isdir(docker_dir) else []
    wanted = ("server.Dockerfile", "worker-cpu.Dockerfile", "worker-cuda.Dockerfile")
    report("deploy/docker has the server, CPU worker and CUDA worker Dockerfiles",
           [f"missing deploy/docker/{f}" for f in wanted if f not in dockerfiles])
    for f in dockerfiles:
        errors, program, flags = dockerfile_errors(os.path.join(docker_dir, f), opts.repo)
        report(f"deploy/docker/{f}: COPY sources exist, non-root USER, exec-form ENTRYPOINT/CMD, "
               "lm-train beside lm-server / lm-worker", errors)
        if program in ("lm-server", "lm-worker"):
            used_flags += [(program, flag, f"deploy/docker/{f} ENTRYPOINT/CMD") for flag in flags]

    bins = {"lm-server": opts.server_bin, "lm-worker": opts.worker_bin}
    for program in ("lm-server", "lm-worker"):
        try:
            known, source = known_flags(program, bins[program], opts.repo)
        except RuntimeError as e:
            report(f"{program}: its flags can be listed", [str(e)])
            continue
        uses = [u for u in used_flags if u[0] == program]
        unknown = [f"{where}: --{flag} is not an {program} flag" for _, flag, where in uses if flag not in known]
        report(f"{program}: the {len(uses)} flags deploy/ passes exist (per {source})", list(dict.fromkeys(unknown)))

    print(f"\ndeploy: {report.passed} passed, {report.failed} failed")
    if not report.failed and not can_render:
        print(f"SKIP: '{opts.kubectl}' is not installed, so the kustomize overlays were not rendered or "
              "checked (kubectl has no current Debian package; install it from the Kubernetes apt "
              "repository to run this test)")
        return SKIP
    return 1 if report.failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
