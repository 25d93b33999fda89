#!/usr/bin/env python3
"""tree.include_rules: the repository's #include lines follow scripts/check_include_rules.py's
rules, and the checker really fails (naming file:line and the rule) on a planted violation."""
import os
import subprocess
import sys
import tempfile
import unittest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHECKER = os.path.join(REPO, "scripts", "check_include_rules.py")


def run_checker(root):
    r = subprocess.run([sys.executable, CHECKER, "--root", root], capture_output=True, text=True)
    return r.returncode, r.stdout


def make_tree(files):
    """A temporary source tree: {relative path: text}."""
    tmp = tempfile.TemporaryDirectory()
    for path, text in files.items():
        full = os.path.join(tmp.name, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as f:
            f.write(text)
    return tmp


class RepositoryTest(unittest.TestCase):
    def test_repository_follows_the_rules(self):
        rc, out = run_checker(REPO)
        self.assertEqual(rc, 0, "forbidden includes:\n" + out)


class PlantedViolationTest(unittest.TestCase):
    # (file, include line, text expected in the rule). The include is on line 2.
    CASES = [
        ("common/ids.h", '#include "storage/job_store.h"', "common/* may include only"),
        ("storage/store.cc", '#include "text/clm/text_file.h"', "storage/* may include only"),
        ("text/mlm/x.cc", '#include "worker/trainer_base/batch_order.h"',
         "text/* may include only"),
        ("artifacts/a.cc", '#include "server/job_manager.h"', "artifacts/* may include only"),
        ("server/job_manager.cc", '#include "text/tokenizers/tokenizer.h"',
         "server/* may not include"),
        ("server/dispatcher.cc", '#include "worker/agent/worker_agent.h"',
         "server/* may not include"),
        ("worker/agent/runner.cc", '#include "worker/trainer_base/event_sink.h"',
         "worker/agent/* may not include"),
        ("worker/agent/runner.cc", '#include "client/job_client.h"',
         "worker/agent/* may not include"),
        ("client/cmd.cc", '#include "worker/agent/worker_agent.h"', "client/* may not include"),
        ("worker/agent/gpu.cc", "#include <torch/torch.h>", "LibTorch headers only in"),
        ("worker/trainer_base/plan.cc", "#include <ATen/ATen.h>", "LibTorch headers only in"),
        ("text/tokenizers/t.cc", "#include <c10/util/Half.h>", "LibTorch headers only in"),
    ]

    def test_each_planted_violation_fails_naming_file_line_and_rule(self):
        for path, include, rule in self.CASES:
            with self.subTest(path=path, include=include):
                with make_tree({path: "// planted\n" + include + "\n"}) as root:
                    rc, out = run_checker(root)
                self.assertEqual(rc, 1, out)
                self.assertIn(f"{path}:2: includes", out)
                self.assertIn(rule, out)

    def test_one_violation_among_allowed_includes_is_the_only_report(self):
        with make_tree({"text/qa/q.cc": '#include "common/a.h"\n#include "text/qa/q.h"\n'
                                        '#include "worker/models/m.h"\n'}) as root:
            rc, out = run_checker(root)
        self.assertEqual(rc, 1)
        self.assertEqual(out.splitlines(), [
            'text/qa/q.cc:3: includes "worker/models/m.h": text/* may include only common/*, '
            'text/*'])


class AllowedEdgesTest(unittest.TestCase):
    def test_allowed_edges_and_listed_exceptions_pass(self):
        files = {
            "common/status.h": '#include "absl/status/status.h"\n#include <string>\n',
            "storage/s.cc": '#include "common/status.h"\n#include "storage/s.h"\n',
            "text/clm/c.cc": '#include "text/tokenizers/t.h"\n#include "common/status.h"\n',
            "artifacts/a.cc": ('#include "lmtrain/v1/artifacts.grpc.pb.h"\n'
                               '#include "proto/grpc_status.h"\n#include "proto_convert.h"\n'),
            "proto/proto_convert.h": "",
            "server/main.cc": '#include "worker/agent/local_worker.h"\n',
            "server/job_manager.cc": '#include "storage/s.h"\n#include "artifacts/a.h"\n',
            "worker/agent/a.cc": '#include "artifacts/a.h"\n#include "common/status.h"\n',
            "worker/trainer/t.cc": '#include <torch/torch.h>\n#include "text/clm/c.h"\n',
            "worker/models/m.cc": "#include <ATen/ATen.h>\n",
            "tests/worker/trainer/t_test.cc": "#include <torch/torch.h>\n",
            "bench/b.cc": "#include <c10/core/Device.h>\n",
            "client/c.cc": '#include "text/qa/q.h"\n#include "artifacts/a.h"\n',
        }
        with make_tree(files) as root:
            rc, out = run_checker(root)
        self.assertEqual(rc, 0, out)


if __name__ == "__main__":
    unittest.main()
