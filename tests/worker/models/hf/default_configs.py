"""Writes tests/data/hf_default_configs/MODEL_TYPE.json for each model family lm-train loads.

    python3 default_configs.py OUT_DIR

Each file holds, for transformers' XConfig() with every argument left at its default:
  "transformers_version": the version that wrote it,
  "saved": the config.json that save_pretrained writes (to_json_string(use_diff=True): HF
           leaves out what equals PretrainedConfig's defaults),
  "defaults": XConfig().to_dict(), every field with its default value.
The C++ test (tests/worker/models/hf_default_config_test.cc) loads "saved", and a config with
nothing but "model_type", and checks each field against "defaults". The files are committed;
rerun this after a transformers upgrade and review the diff.
"""
import json
import os
import sys

from transformers import (AlbertConfig, BertConfig, DistilBertConfig, ElectraConfig,
                          GPT2Config, RobertaConfig)

CONFIGS = [BertConfig, RobertaConfig, DistilBertConfig, AlbertConfig, ElectraConfig, GPT2Config]


def main():
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    for config_class in CONFIGS:
        config = config_class()
        saved = json.loads(config.to_json_string(use_diff=True))
        defaults = config.to_dict()
        version = defaults.pop("transformers_version", None) or saved.get("transformers_version")
        document = {"transformers_version": version, "saved": saved, "defaults": defaults}
        path = os.path.join(out_dir, config.model_type + ".json")
        with open(path, "w") as f:
            json.dump(document, f, indent=1, sort_keys=True)
            f.write("\n")
        print(path)


if __name__ == "__main__":
    main()
