"""Every field of HF transformers' TrainingArguments at its default, as the lines of a job
file's training section ("  key: value", values in JSON, which YAML reads), the input of
tests/common/job_spec_hf_ignored_test.cc. Read from the dataclass itself (constructing
TrainingArguments needs accelerate); enum defaults are written as their values.

Usage: training_arguments_defaults.py
"""

import dataclasses
import enum
import json

import transformers


def main() -> None:
    for field in dataclasses.fields(transformers.TrainingArguments):
        if not field.init:
            continue
        if field.default is not dataclasses.MISSING:
            value = field.default
        elif field.default_factory is not dataclasses.MISSING:
            value = field.default_factory()
        else:
            value = None
        if isinstance(value, enum.Enum):
            value = value.value
        print(f"  {field.name}: {json.dumps(value)}")


if __name__ == "__main__":
    main()
