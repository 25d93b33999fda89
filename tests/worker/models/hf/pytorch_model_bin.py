"""Re-saves an HF model directory in PyTorch's pickled format, as transformers 4.x's
save_pretrained(safe_serialization=False) wrote it, plus a weights file that must never load.

    python3 pytorch_model_bin.py SRC_DIR OUT_DIR [SRC_DIR OUT_DIR ...]

(several pairs in one run share one start of Python, torch and transformers: seconds per pair)
SRC_DIR: config.json + model.safetensors, loaded with transformers (the class named by
config.json's architectures[0]). OUT_DIR gets:
  single/   config.json + pytorch_model.bin (torch.save of model.state_dict())
  sharded/  config.json + pytorch_model-0000N-of-0000M.bin (shards of at most 4 kB) +
            pytorch_model.bin.index.json
  evil/     config.json + pytorch_model.bin whose pickle calls os.system("touch OUT_DIR/pwned")
"""
import json
import os
import shutil
import sys

import torch
import transformers
from huggingface_hub import split_torch_state_dict_into_shards


class Evil:
    def __init__(self, command):
        self.command = command

    def __reduce__(self):
        return (os.system, (self.command,))


def model_dir(out_dir, name, src_dir):
    path = os.path.join(out_dir, name)
    os.makedirs(path, exist_ok=True)
    shutil.copy(os.path.join(src_dir, "config.json"), path)
    return path


def save_sharded(state_dict, path):
    split = split_torch_state_dict_into_shards(
        state_dict, filename_pattern="pytorch_model{suffix}.bin", max_shard_size=4096)
    assert split.is_sharded, "the model is too small to shard"
    for filename, names in split.filename_to_tensors.items():
        torch.save({name: state_dict[name] for name in names}, os.path.join(path, filename))
    index = {"metadata": split.metadata, "weight_map": split.tensor_to_filename}
    with open(os.path.join(path, "pytorch_model.bin.index.json"), "w") as f:
        json.dump(index, f, indent=2)


def main(src_dir, out_dir):
    with open(os.path.join(src_dir, "config.json")) as f:
        architecture = json.load(f)["architectures"][0]
    model = getattr(transformers, architecture).from_pretrained(src_dir)
    state_dict = model.state_dict()
    torch.save(state_dict, os.path.join(model_dir(out_dir, "single", src_dir), "pytorch_model.bin"))
    save_sharded(state_dict, model_dir(out_dir, "sharded", src_dir))
    evil = {name: tensor for name, tensor in state_dict.items()}
    evil["payload"] = Evil("touch " + os.path.join(out_dir, "pwned"))
    torch.save(evil, os.path.join(model_dir(out_dir, "evil", src_dir), "pytorch_model.bin"))


if __name__ == "__main__":
    args = sys.argv[1:]
    if not args or len(args) % 2:
        sys.exit(__doc__)
    for i in range(0, len(args), 2):
        main(args[i], args[i + 1])
